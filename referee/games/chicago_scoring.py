"""Swedish Chicago scoring: showdowns (CH-10..CH-13), points under the score
floor, and how a game ends (the target, the tie-break of CH-22, the deal limit).

Split from the state machine in `chicago` so that what a deal is worth reads
in one place: `ChicagoScoring` is a base of `ChicagoState` and keeps the
state's scores, showdown records and reveals; `ChicagoState` supplies the
fields annotated here, how an event is sent (`_emit`) and how the next deal
starts (`_next_deal`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from protocol.chicago import (
    ChicagoRules,
    HandRevealed,
    Reveal,
    Showdown,
    ShowdownRecord,
)
from protocol.common import DealEnded, GameEnded, ScoreChanged
from referee.games.base import TERMINAL, GameResult
from referee.games.cards import card_names
from referee.games.poker import ROYAL_VALUE, category_code, describe, evaluate

# Suit order for the `suit_order` exact-tie policy: clubs < diamonds < hearts < spades.
_SUIT_STRENGTH = (3, 2, 1, 0)


def tie_suit(hand: list[int], value: int) -> int:
    """`suit_order` policy: the best suit among the cards of the top key rank."""
    top_rank = (value >> 16) & 15
    return max(_SUIT_STRENGTH[c & 3] for c in hand if c >> 2 == top_rank)


class ChicagoScoring:
    """Showdowns, points and the end of a deal or a game, for `ChicagoState`."""

    rules: ChicagoRules
    n_players: int
    deal_number: int
    _scores: list[int]
    _points: dict[Any, int]  # by category code (`rules.hand_points`)
    _order: list[int]
    _active: list[int]
    _tied: list[int] | None
    _scored_hands: dict[int, frozenset[int]]
    _rec_showdowns: list[ShowdownRecord]
    _rec_reveals: list[Reveal]
    _deal_closed: bool
    _winner: int | None
    _end_reason: str
    _over: bool
    _to_act: int
    _emit: Callable[..., None]
    _next_deal: Callable[[], None]
    result: Callable[[], GameResult]

    def _reveal(self, seat: int, cards: Sequence[int], reason: str) -> None:
        shown = card_names(cards)
        self._rec_reveals.append(Reveal(seat=seat, cards=shown, reason=reason))
        self._emit(HandRevealed(seat=seat, cards=shown, reason=reason))

    def _add(self, seat: int, points: int, reason: str) -> None:
        before = self._scores[seat]
        after = before + points
        floor = self.rules.score_floor
        if floor is not None:
            after = max(floor, after)
        self._scores[seat] = after
        self._emit(ScoreChanged(seat=seat, points=after - before, total=after, reason=reason))

    def _showdown(self, rnd: int, hands: dict[int, list[int]]) -> bool:
        """CH-10..CH-12 on `hands`; returns True if the game ended."""
        ace_low = self.rules.ace_low_straight
        values = {s: evaluate(h, ace_low) for s, h in hands.items()}
        best = max(values.values())
        top = [s for s in self._order if values[s] == best]
        cat = category_code(best)
        points = 0 if cat == "HC" else self._points.get(cat, 0)
        winners, tied = self._showdown_winners(top, cat, hands, best)
        record = self._showdown_record(rnd, best, cat, points, winners, tied)
        self._rec_showdowns.append(record)
        event = Showdown(
            round=record.round,
            winners=record.winners,
            category=record.category,
            description=record.description,
            points=record.points,
            tied=record.tied,
        )
        self._emit(event)
        if not winners:
            return False
        return self._score_showdown(rnd, hands, winners, best, cat, points)

    def _showdown_winners(
        self, top: list[int], cat: str, hands: dict[int, list[int]], best: int
    ) -> tuple[list[int], list[int]]:
        """(winners, tied): nobody with a high card; the seats with the best
        hand, an exact tie settled by `exact_tie_policy`."""
        if cat == "HC":
            return [], []
        if len(top) == 1:
            return top, []
        policy = self.rules.exact_tie_policy
        if policy == "all_tied":
            return top, top
        if policy == "suit_order":
            return [max(top, key=lambda s: tie_suit(hands[s], best))], top
        return [], top

    def _showdown_record(
        self, rnd: int, best: int, cat: str, points: int, winners: list[int], tied: list[int]
    ) -> ShowdownRecord:
        return ShowdownRecord(
            round=rnd,
            winners=winners,
            category=cat,
            # CH-10/CH-24: only scorer, category and points are public; the hand is
            # named only when its cards are shown (final showdown, reveal_scoring_hand).
            description=describe(best) if cat != "HC" and (rnd == 0 or self.rules.reveal_scoring_hand) else None,
            points=0 if not winners or (cat == "4K" and self.rules.four_kind_reset) else points,
            tied=tied,
        )

    def _score_showdown(
        self, rnd: int, hands: dict[int, list[int]], winners: list[int], best: int, cat: str, points: int
    ) -> bool:
        """The winners score (or, CH-12's four of a kind, reset the others); True if the game ended."""
        for s in winners:
            self._scored_hands[s] = frozenset(hands[s])
            if self.rules.reveal_scoring_hand and rnd != 0:
                self._reveal(s, hands[s], "scoring_hand")
        for s in winners:
            if cat == "4K" and self.rules.four_kind_reset:
                for o in self._active:
                    if o != s and self._scores[o]:
                        self._add(o, -self._scores[o], "four_kind_reset")
            else:
                self._add(s, points, "showdown")
        if best == ROYAL_VALUE and self.rules.royal_instant_win:
            return self._decide(winners, "royal_flush")
        return self._immediate_check(winners)

    def _immediate_check(self, scorers: list[int]) -> bool:
        if self.rules.win_check != "immediate" or self._tied is not None:
            return False
        reached = [s for s in scorers if self._scores[s] >= self.rules.target_score]
        return self._decide(reached, "target") if reached else False

    def _decide(self, candidates: list[int], reason: str) -> bool:
        """End the game for the best candidate, or start a tie-break (CH-22)."""
        best = max(self._scores[s] for s in candidates)
        top = [s for s in candidates if self._scores[s] == best]
        if len(top) == 1:
            self._finish(top[0], reason)
            return True
        self._tied = sorted(top)
        self._next_deal()
        return True

    def _end_deal(self) -> None:
        """After the last trick and the final showdown: a tie-break settled, the
        target reached at the end of a deal, the deal limit, or the next deal."""
        self._close_deal()
        r = self.rules
        if self._tied is not None:
            best = max(self._scores[s] for s in self._tied)
            top = [s for s in self._tied if self._scores[s] == best]
            if len(top) == 1:
                self._finish(top[0], "tiebreak")
                return
            self._tied = top
        elif r.win_check == "end_of_deal":
            reached = [s for s in range(self.n_players) if self._scores[s] >= r.target_score]
            if reached and self._decide(reached, "target"):
                return
        if self.deal_number >= r.max_deals:
            best = max(self._scores)
            top = [s for s in range(self.n_players) if self._scores[s] == best]
            self._finish(top[0] if len(top) == 1 else None, "deal_limit")
            return
        self._next_deal()

    def _close_deal(self) -> None:
        if not self._deal_closed:
            self._deal_closed = True
            self._emit(DealEnded(deal=self.deal_number, scores=list(self._scores)))

    def _finish(self, winner: int | None, reason: str) -> None:
        self._close_deal()
        self._winner = winner
        self._end_reason = reason
        self._over = True
        self._to_act = TERMINAL
        res = self.result()
        self._emit(GameEnded(winner=winner, scores=res.scores, placements=res.placements, reason=reason))
