"""The built-in bot `greedy`: simple, explainable heuristics for Swedish Chicago.

Uses only `protocol`, the standard library and its own poker hands
(`greedy_hands`), none of the engine.
`choose(view, legal)` is a pure function: the same view and legal list give
the same action (its small Monte Carlo samples are seeded from the view).

Heuristics, by phase:

* exchange: keep made hands (pair, two pair, trips keep their cards; a
  straight or better stands pat); break nothing good; draw to four cards of
  a flush, or to an open-ended straight in a scored round; otherwise keep one
  or two high cards and draw. The last exchange round (unscored in the
  `gamerules` preset) feeds the final showdown *and* trick play, so there the
  bot also keeps an ace (or king) kicker for the last trick.
* take_open (`one_open`): take the face-up card if the hand with it is worth
  at least as much as the average hand with an unknown card.
* chicago_call: only with at least three cards that head their suit from
  the ace, and only if sampled opponent hands show the hand taking all five
  tricks at least 92 % of the time (e.g. A-K-Q-J-x of one suit, four aces).
* trick: everything aims at the last trick (or at breaking an opponent's
  Chicago). Early tricks shed the lowest card and save the strongest one;
  from four cards left (three with 3-4 players) the bot samples opponent
  hands consistent with the cards played and the voids shown, and searches
  the rest of the deal exactly, opponents assumed to play against it (so it
  wins trick 4 cheaply when that lets it lead a sure winner to trick 5).
  As declarer it leads its top cards; against a declarer it beats the led
  card whenever it can.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Sequence

from protocol.bot import run_bot
from protocol.chicago import CallChicago, ChicagoAction, ChicagoRules, ChicagoView, Exchange, TakeOpen
from protocol.common import PlayCard
from protocol.messages import GameStart
from referee.bots.greedy_hands import card_int, card_str, hand_score, keep_for_exchange

# Tunables; the values were picked in greedy-vs-greedy matches (1000 games each).
SEARCH_CARDS_2P = 4  # exact end-game search from this many cards in hand (2 players)
SEARCH_CARDS_NP = 3  # ... with 3-4 players
SEARCH_WORLDS = 24  # sampled opponent hands per search decision
CHICAGO_WORLDS = 150
CHICAGO_THRESHOLD = 0.92


def _unseen(view: ChicagoView) -> list[int]:
    """Cards this seat has not seen played or in its hand."""
    seen = {card_int(c) for c in view.hand}
    for t in view.tricks:
        seen.update(card_int(p.card) for p in t.cards)
    seen.update(card_int(p.card) for p in view.trick)
    return [c for c in range(52) if c not in seen]


def _rng_for(view: ChicagoView) -> random.Random:
    """Deterministic per decision, so `choose` stays a pure function."""
    text = "|".join(
        [str(view.deal), str(view.seat), str(view.trick_number), " ".join(view.hand)] + [p.card for p in view.trick]
    )
    return random.Random(text)


def _exchange_rounds(view: ChicagoView, rules: ChicagoRules | None) -> int:
    """Exchange rounds per deal: from the rules if known (`game_start`), else
    the `gamerules` shape (three rounds; the last is unscored and followed by
    trick play and the final showdown)."""
    return rules.exchanges if rules is not None else max(3, view.exchange_round)


def _exchange(view: ChicagoView, legal: Sequence[ChicagoAction], rules: ChicagoRules | None) -> Exchange | None:
    hand = [card_int(c) for c in view.hand]
    last = max(1, view.exchange_round) >= _exchange_rounds(view, rules)
    keep = set(keep_for_exchange(hand, last))
    discard = {card_str(c) for c in hand if c not in keep}
    return next((a for a in legal if isinstance(a, Exchange) and set(a.discard) == discard), None)


def _take_open(view: ChicagoView, legal: Sequence[ChicagoAction]) -> TakeOpen | None:
    hand = [card_int(c) for c in view.hand]
    if view.open_card is None or len(hand) != 4:
        return None
    open_card = card_int(view.open_card)
    pool = [c for c in range(52) if c not in hand and c != open_card]
    expected = sum(hand_score(hand + [c]) for c in pool) / len(pool)
    take = hand_score(hand + [open_card]) >= expected
    return next((a for a in legal if isinstance(a, TakeOpen) and a.take == take), None)


# ------------------------------------------------------------------ chicago


def _deal_worlds(view: ChicagoView, rng: random.Random, n: int) -> list[dict[int, list[int]]]:
    """Sample `n` assignments of unseen cards to the other active seats,
    respecting hand sizes and the voids they have shown."""
    others = [s for s in view.active if s != view.seat]
    played_now = {p.seat for p in view.trick}
    done = len(view.tricks)
    sizes = {s: 5 - done - (1 if s in played_now else 0) for s in others}
    voids = _shown_voids(view, others)
    pool = _unseen(view)
    order = sorted(others, key=lambda s: -len(voids[s]))
    worlds = [_deal_world(pool, order, sizes, voids, rng) for _ in range(n)]
    return [w for w in worlds if w is not None]


def _shown_voids(view: ChicagoView, others: list[int]) -> dict[int, set[int]]:
    """The suits each of `others` has not followed when they were led."""
    voids: dict[int, set[int]] = {s: set() for s in others}
    for cards in [t.cards for t in view.tricks] + [view.trick]:
        if not cards:
            continue
        led = card_int(cards[0].card) & 3
        for p in cards[1:]:
            if p.seat in voids and card_int(p.card) & 3 != led:
                voids[p.seat].add(led)
    return voids


def _deal_world(
    pool: list[int], order: list[int], sizes: dict[int, int], voids: dict[int, set[int]], rng: random.Random
) -> dict[int, list[int]] | None:
    """Each seat in `order` dealt its size from the cards left that fit its voids; None if 20 tries fail."""
    for _attempt in range(20):
        left = set(pool)
        world: dict[int, list[int]] = {}
        for s in order:
            fit = [c for c in pool if c in left and (c & 3) not in voids[s]]
            if len(fit) < sizes[s]:
                break
            world[s] = rng.sample(fit, sizes[s])
            left.difference_update(world[s])
        else:
            return world
    return None


def _next_seat(active: list[int], seat: int) -> int:
    i = active.index(seat)
    return active[(i + 1) % len(active)]


def chicago_succeeds(mine: list[int], world: dict[int, list[int]], active: list[int], me: int) -> bool:
    """Declarer leads every trick: bosses first, then the top of the longest
    suit. Opponents beat the lead when they can, else play low."""
    mine = list(mine)
    hands = {s: list(h) for s, h in world.items()}
    for _ in range(5):
        lead = _chicago_lead(mine, mine, [c for h in hands.values() for c in h])
        mine.remove(lead)
        suit = lead & 3
        s = _next_seat(active, me)
        while s != me:
            h = hands[s]
            follow = [c for c in h if c & 3 == suit]
            if follow:
                top = max(follow)
                if top > lead:
                    return False
                h.remove(min(follow))
            else:
                h.remove(min(h, key=lambda c: c >> 2))
            s = _next_seat(active, s)
    return True


def _chicago_lead(cards: list[int], mine: list[int], outstanding: list[int]) -> int:
    """The declarer's lead: the top card of the longest suit among its bosses
    (no outstanding card above them in suit), or else among all `cards`."""
    length = Counter(c & 3 for c in mine)
    bosses = [c for c in cards if not any((o & 3) == (c & 3) and o > c for o in outstanding)]
    return max(bosses or cards, key=lambda c: (length[c & 3], c >> 2))


def top_cards(cards: list[int]) -> int:
    """How many cards head an unbroken run from the ace of their suit."""
    mine = set(cards)
    return sum(all(h in mine for h in range(c + 4, 52, 4)) for c in cards)


def chicago_odds(view: ChicagoView, worlds: int = CHICAGO_WORLDS) -> float:
    """Estimated chance of taking all five tricks with this hand as declarer."""
    mine = [card_int(c) for c in view.hand]
    if top_cards(mine) < 3:  # cheap filter: far from a sure thing
        return 0.0
    sample = _deal_worlds(view, _rng_for(view), worlds)
    if not sample:
        return 0.0
    wins = sum(chicago_succeeds(mine, w, list(view.active), view.seat) for w in sample)
    return wins / len(sample)


def _chicago(view: ChicagoView, legal: Sequence[ChicagoAction]) -> CallChicago | None:
    call = chicago_odds(view) >= CHICAGO_THRESHOLD
    return next((a for a in legal if isinstance(a, CallChicago) and a.call == call), None)


# ------------------------------------------------------------------ tricks


def _trick_winner(trick: list[tuple[int, int]]) -> tuple[int, int]:
    led = trick[0][1] & 3
    return max((x for x in trick if x[1] & 3 == led), key=lambda x: x[1] >> 2)


def _after_play(
    hands: dict[int, list[int]],
    c: int,
    seat: int,
    led: int,
    best: int,
    winner: int,
    played: int,
    tricks_left: int,
    me: int,
    nxt: dict[int, int],
    n: int,
) -> int:
    """_search's value once `seat` has played `c` (already out of its hand)."""
    if not played:
        led, best, winner = c & 3, c, seat
    elif c & 3 == led and c > best:
        best, winner = c, seat
    if played + 1 == n:
        if tricks_left == 1:
            return 1 if winner == me else 0
        return _search(hands, winner, -1, -1, -1, 0, tricks_left - 1, me, nxt, n)
    return _search(hands, nxt[seat], led, best, winner, played + 1, tricks_left, me, nxt, n)


def _search(
    hands: dict[int, list[int]],
    seat: int,
    led: int,
    best: int,
    winner: int,
    played: int,
    tricks_left: int,
    me: int,
    nxt: dict[int, int],
    n: int,
) -> int:
    """1 if `me` can force winning the last trick, the others playing against it.

    The current trick has `played` cards; `led` is its suit (-1 before the
    lead) and `best`/`winner` its highest card of the led suit and who played it.
    """
    hand = hands[seat]
    options = [c for c in hand if c & 3 == led] if played else hand
    if not options:
        options = hand
    maximize = seat == me
    for c in list(options):
        hand.remove(c)
        v = _after_play(hands, c, seat, led, best, winner, played, tricks_left, me, nxt, n)
        hand.append(c)
        if maximize:
            if v:
                return 1
        elif not v:
            return 0
    return 0 if maximize else 1


def _endgame(view: ChicagoView, options: list[int], mine: list[int], trick: list[tuple[int, int]]) -> int | None:
    """The option that wins the last trick in the most sampled worlds."""
    worlds = _deal_worlds(view, _rng_for(view), SEARCH_WORLDS)
    if not worlds:
        return None
    active = list(view.active)
    nxt = {s: active[(i + 1) % len(active)] for i, s in enumerate(active)}
    me = view.seat
    n = len(active)
    led, best, winner = -1, -1, -1
    if trick:
        led = trick[0][1] & 3
        winner, best = _trick_winner(trick)
    played = len(view.trick)
    tricks_left = 5 - len(view.tricks)
    score = dict.fromkeys(options, 0)
    for w in worlds:
        for c in options:
            hands = dict(w)
            hands[me] = [x for x in mine if x != c]
            score[c] += _after_play(hands, c, me, led, best, winner, played, tricks_left, me, nxt, n)
    # Most wins; then keep high cards (shed the lowest).
    return max(options, key=lambda c: (score[c], -(c >> 2), c & 3))


def _keeper(mine: list[int], unseen: list[int]) -> int:
    """The card to save for the last trick: the strongest, bosses first."""

    def strength(c: int) -> tuple[int, int, int]:
        higher = sum(1 for o in unseen if (o & 3) == (c & 3) and o > c)
        length = sum(1 for m in mine if (m & 3) == (c & 3))
        return (-higher, c >> 2, length)

    return max(mine, key=strength)


def _play(view: ChicagoView, legal: Sequence[ChicagoAction]) -> int:
    mine = [card_int(c) for c in view.hand]
    options = [card_int(a.card) for a in legal if isinstance(a, PlayCard)]  # every one, in trick play
    trick = [(p.seat, card_int(p.card)) for p in view.trick]
    if view.chicago_declarer is not None:
        return _chicago_card(view, mine, options, trick)
    depth = SEARCH_CARDS_2P if len(view.active) == 2 else SEARCH_CARDS_NP
    if len(mine) <= depth and len(options) > 1:
        pick = _endgame(view, options, mine, trick)
        if pick is not None:
            return pick
    # Early tricks: save the strongest card for the end and shed the lowest
    # other one, whether leading, following suit or discarding when void.
    keeper = _keeper(mine, _unseen(view))
    spare = [c for c in options if c != keeper] or options
    return _lowest(spare)


def _lowest(cards: list[int]) -> int:
    return min(cards, key=lambda c: (c >> 2, c & 3))


def _chicago_card(view: ChicagoView, mine: list[int], options: list[int], trick: list[tuple[int, int]]) -> int:
    """A Chicago is called. Ours: lead bosses first, then the top of the
    longest suit. Someone else's: take any trick we can."""
    if view.chicago_declarer == view.seat:
        if trick:
            return max(options, key=lambda c: c >> 2)
        return _chicago_lead(options, mine, _unseen(view))
    if trick:
        best = _trick_winner(trick)[1]
        beaters = [c for c in options if c & 3 == best & 3 and c > best]
        if beaters:
            return max(beaters)
    return _lowest(options)


# ------------------------------------------------------------------ entry


def choose(
    view: ChicagoView, legal: Sequence[ChicagoAction], rules: ChicagoRules | None = None
) -> ChicagoAction | None:
    """Pick one element of `legal` for `view` (a ChicagoView).

    `rules` (a ChicagoRules, e.g. from `game_start`) tells how many exchange
    rounds there are, i.e. which one is the last before trick play; without
    it the `gamerules` shape (three rounds, the last unscored) is assumed.
    Always returns an element of `legal` (`legal[0]` if anything goes wrong).
    """
    if not legal:
        return None
    if len(legal) == 1:
        return legal[0]
    try:
        phase = view.phase
        if phase == "exchange":
            action: ChicagoAction | None = _exchange(view, legal, rules)
        elif phase == "take_open":
            action = _take_open(view, legal)
        elif phase == "chicago_call":
            action = _chicago(view, legal)
        elif phase == "trick":
            pick = card_str(_play(view, legal))
            action = next((a for a in legal if isinstance(a, PlayCard) and a.card == pick), None)
        else:
            action = None
    except Exception as exc:  # never crash a match over a heuristic bug
        print(f"greedy: {type(exc).__name__}: {exc}", file=sys.stderr)
        action = None
    return action if action is not None else legal[0]


def main() -> None:
    """Serve the referee, with each game's rules from its `game_start`."""
    current: dict[str, ChicagoRules | None] = {}

    def on_game_start(msg: GameStart) -> None:
        current["rules"] = msg.rules if isinstance(msg.rules, ChicagoRules) else None  # it plays Chicago only

    run_bot(
        lambda view, legal: choose(view, legal, current.get("rules")),
        name="greedy",
        version="1.0",
        on_game_start=on_game_start,
    )


if __name__ == "__main__":
    main()
