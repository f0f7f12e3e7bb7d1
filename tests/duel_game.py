"""Duel: a small third game defined only here, to prove that games plug in.

Two players, twelve cards (nine to ace of spades and hearts), six each. The
dealer's opponent leads; a player must follow the suit led if they can; the
highest card of the suit led takes the trick and leads the next; each trick
is a point. After a deal the dealer passes on; the first to `target_score`
(or more than the other when both reach it) wins, and a game that never gets
there ends after `max_deals`.

Everything the referee needs comes through its `GameDef`: its engine (on the
shared `EngineState`), its wire types (the common trick events and `play`
actions, a rules and a view Struct of its own) and its hooks, the smallest
honest ones. `register_duel()` makes it known to every command.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from protocol.common import (
    CardPlayed,
    DealEnded,
    DealStarted,
    GameEnded,
    HandDealt,
    PlayCard,
    PlayedCard,
    ScoreChanged,
    TrickWon,
)
from referee.errors import ConfigError, IllegalAction
from referee.games.base import PUBLIC, TERMINAL, Deal, EngineState, GameDef, shuffle
from referee.games.cards import CARD_INT, CARD_STR
from referee.games.registry import GAMES, register, unregister
from referee.games.show import (
    CheckScenario,
    ChoiceError,
    GamePage,
    GameText,
    GameWords,
    ReplayPen,
    common_event_text,
)

NAME = "duel"
DECK: tuple[int, ...] = tuple(rank * 4 + suit for suit in (0, 1) for rank in range(7, 13))  # 9s..As, 9h..Ah
HAND = 6


class DuelRules(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag=NAME):
    target_score: int = 8
    max_deals: int = 50


class DuelView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag=NAME):
    seat: int
    n_players: int
    phase: str
    deal: int
    dealer: int
    tiebreak: bool
    target_score: int
    scores: list[int]
    hand: list[str]
    trick_number: int
    leader: int | None
    trick: list[PlayedCard]
    tricks_won: list[int]


class DuelState(EngineState):
    """The engine: pure, seeded, one check per move kind."""

    def __init__(self, rules: DuelRules, n_players: int, seed: int, deals: Sequence[Deal] = ()) -> None:
        if n_players != 2:
            raise ConfigError(f"Duel is for 2 players, not {n_players}")
        self.rules, self.n_players = rules, n_players
        self._rng = random.Random(seed)
        self._explicit = list(deals)
        self.events: list[tuple[int, msgspec.Struct]] = []
        self._scores, self._decks, self._over, self._winner, self._end_reason = [0, 0], [], False, None, ""
        self._dealer, self._deal = 1, 0
        self._start_deal()

    def _emit(self, event: msgspec.Struct, audience: int = PUBLIC) -> None:
        self.events.append((audience, event))

    def _start_deal(self) -> None:
        self._deal += 1
        self._dealer = 1 - self._dealer
        if self._explicit:
            deal = self._explicit.pop(0)
            self._dealer = deal.dealer
        else:
            deck = list(DECK)
            shuffle(deck, self._rng)
            deal = Deal(self._dealer, tuple(deck))
        self._decks.append(deal)
        self._hands = [sorted(deal.deck[0::2][:HAND]), sorted(deal.deck[1::2][:HAND])]
        self._to_act = 1 - self._dealer
        self._trick: list[tuple[int, int]] = []
        self._trick_number, self._won = 1, [0, 0]
        self._emit(DealStarted(deal=self._deal, dealer=self._dealer, active=[0, 1]))
        for seat in (0, 1):
            self._emit(HandDealt(seat=seat, cards=[CARD_STR[c] for c in self._hands[seat]]), seat)

    def legal_actions(self) -> list[Any]:
        if self._over:
            return []
        hand = self._hands[self._to_act]
        led = self._trick[0][1] & 3 if self._trick else None
        follow = [c for c in hand if led is not None and c & 3 == led]
        return [PlayCard(card=CARD_STR[c]) for c in (follow or hand)]

    def verify_action(self, action: Any) -> None:
        if self._over:
            raise IllegalAction("the game is over")
        if not isinstance(action, PlayCard):
            raise IllegalAction(f"seat {self._to_act} must play a card now, not {type(action).__name__}")
        card = CARD_INT.get(action.card)
        if card not in self._hands[self._to_act]:
            raise IllegalAction(f"cannot play {action.card}: not in hand")
        if action not in self.legal_actions():
            raise IllegalAction(f"must follow suit: {CARD_STR[self._trick[0][1]]} led")

    def apply_action(self, action: Any) -> None:
        self.verify_action(action)
        seat, card = self._to_act, CARD_INT[action.card]
        self._hands[seat].remove(card)
        self._trick.append((seat, card))
        self._emit(CardPlayed(seat=seat, card=action.card, trick=self._trick_number))
        if len(self._trick) < 2:
            self._to_act = 1 - seat
            return
        led = self._trick[0][1] & 3
        winner, best = max((p for p in self._trick if p[1] & 3 == led), key=lambda p: p[1] >> 2)
        self._won[winner] += 1
        self._scores[winner] += 1
        self._emit(TrickWon(trick=self._trick_number, seat=winner, card=CARD_STR[best]))
        self._emit(ScoreChanged(seat=winner, points=1, total=self._scores[winner], reason="trick"))
        self._trick, self._to_act = [], winner
        if self._trick_number < HAND:
            self._trick_number += 1
            return
        self._emit(DealEnded(deal=self._deal, scores=list(self._scores)))
        top = max(self._scores)
        ahead = [s for s in (0, 1) if self._scores[s] == top]
        if top >= self.rules.target_score and len(ahead) == 1:
            self._finish(ahead[0], "target")
        elif self._deal >= self.rules.max_deals:
            self._finish(ahead[0] if len(ahead) == 1 else None, "deal_limit")
        else:
            self._start_deal()

    def _finish(self, winner: int | None, reason: str) -> None:
        self._over, self._winner, self._end_reason, self._to_act = True, winner, reason, TERMINAL
        res = self.result()
        self._emit(GameEnded(winner=winner, scores=res.scores, placements=res.placements, reason=reason))

    def view(self, seat: int) -> DuelView:
        return DuelView(
            seat=seat,
            n_players=2,
            phase="game_over" if self._over else "trick",
            deal=self._deal,
            dealer=self._dealer,
            tiebreak=False,
            target_score=self.rules.target_score,
            scores=list(self._scores),
            hand=[CARD_STR[c] for c in self._hands[seat]],
            trick_number=self._trick_number,
            leader=None if self._over else self._to_act,
            trick=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in self._trick],
            tricks_won=list(self._won),
        )


# ------------------------------------------------------------------ its hooks: the smallest honest ones


def _event_text(ev: Any, who: Callable[[int], str], me: int) -> str | None:
    return common_event_text(ev, who, me)  # every event of Duel is a common trick event


def _parse_cards(chosen: list[str], legal: Sequence[Any]) -> Any:
    if len(chosen) != 1:
        raise ChoiceError("play one card at a time")
    return PlayCard(card=chosen[0])


def _position(pen: ReplayPen, view: Any) -> None:
    pen.emit(f"  trick {view.trick_number}")


DUEL = GameDef(
    name=NAME,
    title="Duel",
    seat_counts=(2,),
    rules_type=DuelRules,
    presets={"standard": {}},
    default_preset="standard",
    action_type=PlayCard,
    new_state=DuelState,
    words=GameWords(
        event_text=_event_text,
        action_text=lambda a: f"play {a.card}",
        parse_words=lambda _words, _legal: None,
        parse_cards=_parse_cards,
        phase_help=lambda _view: ["Follow the suit led if you can; the highest card of it wins."],
    ),
    text=GameText(events={}, position=_position, reasons={"trick": "a trick"}),
    page=GamePage(start_fields=lambda view, _state: {"phase": "trick"}, hints={"first_phase": "trick"}),
    check_scenarios=(CheckScenario(2),),
    decision_kinds=("play",),
    default_opponent="random",
    deck_size=len(DECK),
    full_deck=DECK,
)


def register_duel() -> None:
    if NAME not in GAMES:
        register(DUEL)


def unregister_duel() -> None:
    unregister(NAME)
