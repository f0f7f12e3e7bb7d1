"""An outside opponent for Swedish Chicago, written from docs/protocol.md and
docs/rules.md alone: it imports neither the engine nor the SDK nor any other
bot, only the standard library, and reads raw JSON lines.

The built-in bots are measured against it (docs/bots.md), as an
independent check that their strength is not a quirk of playing each other.

How it plays:

* exchange: every legal discard is scored by drawing the replacements at
  random from the cards it has not seen, 40 times, and averaging the
  showdown points of the hands made (a little more for high ranks, so the
  better of two pairs is preferred); before the last exchange round it also
  values an ace or king kept for the scoring last trick;
* Chicago: called only when every card is a sure winner (it heads its suit
  down from the ace);
* tricks: sheds its lowest card and saves its strongest for the last trick;
  from three cards left it deals the unseen cards at random 30 times (voids
  respected) and plays the card that wins the last trick most often against
  best defence; on the fourth trick it wins cheaply when that leaves it the
  boss card to lead; as declarer it plays its top card; against a declarer it beats the
  card led whenever it can.

Any other game, or a decision it does not know: the first legal action.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

RANKS = "23456789TJQKA"
SUITS = "shdc"
POINTS = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 52}
DRAWS = 40


def card(text: str) -> tuple[int, int]:
    return RANKS.index(text[0]), SUITS.index(text[1])


def category(cards: list[tuple[int, int]]) -> tuple[int, int]:
    """(0 high card .. 9 royal flush, top key rank) of five cards; ace-low straights count."""
    ranks = sorted((r for r, _ in cards), reverse=True)
    counts = sorted(Counter(ranks).items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    flush = len({s for _, s in cards}) == 1
    distinct = len(counts) == 5
    straight = distinct and (ranks[0] - ranks[4] == 4 or ranks == [12, 3, 2, 1, 0])
    top = 3 if ranks == [12, 3, 2, 1, 0] else ranks[0]
    if straight and flush:
        return (9 if top == 12 else 8), top
    shape = [n for _, n in counts]
    if shape[0] == 4:
        return 7, counts[0][0]
    if shape[:2] == [3, 2]:
        return 6, counts[0][0]
    if flush:
        return 5, top
    if straight:
        return 4, top
    if shape[0] == 3:
        return 3, counts[0][0]
    if shape[:2] == [2, 2]:
        return 2, counts[0][0]
    if shape[0] == 2:
        return 1, counts[0][0]
    return 0, top


def hand_worth(cards: list[tuple[int, int]], last_round: bool) -> float:
    cat, top = category(cards)
    worth = POINTS[cat] + top / 20.0
    if last_round:
        best = max(r for r, _ in cards)
        worth += 1.5 if best == 12 else 0.6 if best == 11 else 0.0
    return worth


def seen_cards(view: dict) -> set[tuple[int, int]]:
    seen = {card(c) for c in view["hand"]}
    for t in view.get("tricks", []):
        seen.update(card(p["card"]) for p in t["cards"])
    seen.update(card(p["card"]) for p in view.get("trick", []))
    return seen


def choose_exchange(view: dict, legal: list[dict], rng: random.Random, rounds: int) -> dict:
    hand = [card(c) for c in view["hand"]]
    seen = seen_cards(view)
    unseen = [(r, s) for r in range(13) for s in range(4) if (r, s) not in seen]
    last_round = view.get("exchange_round", 1) >= rounds
    best, best_worth = legal[0], -1.0
    for action in legal:
        out = {card(c) for c in action["discard"]}
        kept = [c for c in hand if c not in out]
        n = len(out)
        if n == 0:
            worth = hand_worth(hand, last_round)
        else:
            worth = sum(hand_worth(kept + rng.sample(unseen, n), last_round) for _ in range(DRAWS)) / DRAWS
        if worth > best_worth:
            best, best_worth = action, worth
    return best


def sure_winners(hand: list[tuple[int, int]]) -> int:
    mine = set(hand)
    return sum(all((h, s) in mine for h in range(r + 1, 13)) for r, s in hand)


def voids(view: dict) -> dict[int, set[int]]:
    """Suits each seat has shown it lacks (it did not follow them)."""
    out: dict[int, set[int]] = {}
    for cards in [t["cards"] for t in view.get("tricks", [])] + [view.get("trick", [])]:
        if cards:
            led = card(cards[0]["card"])[1]
            for p in cards[1:]:
                if card(p["card"])[1] != led:
                    out.setdefault(p["seat"], set()).add(led)
    return out


def last_trick_won(hands: dict, seat: int, trick: list, order: list[int], me: int, tricks_left: int) -> bool:
    """Double-dummy: does `me` win the last trick, everybody else playing against it?"""
    hand = hands[seat]
    led = trick[0][1][1] if trick else None
    options = [c for c in hand if c[1] == led] if led is not None else list(hand)
    options = options or list(hand)
    for c in options:
        hand.remove(c)
        now = trick + [(seat, c)]
        if len(now) == len(order):
            lead_suit = now[0][1][1]
            winner = max((x for x in now if x[1][1] == lead_suit), key=lambda x: x[1][0])[0]
            if tricks_left == 1:
                result = winner == me
            else:
                result = last_trick_won(hands, winner, [], order, me, tricks_left - 1)
        else:
            nxt = order[(order.index(seat) + 1) % len(order)]
            result = last_trick_won(hands, nxt, now, order, me, tricks_left)
        hand.append(c)
        if result == (seat == me):
            return result
    return seat != me


def endgame_card(view: dict, legal: list[dict], rng: random.Random) -> dict | None:
    """With three cards or fewer: the card that wins the last trick in the most
    sampled deals of the unseen cards (voids respected)."""
    me = view["seat"]
    order = list(view["active"])
    hand = [card(c) for c in view["hand"]]
    trick = [(p["seat"], card(p["card"])) for p in view.get("trick", [])]
    played_now = {s for s, _ in trick}
    tricks_left = 5 - len(view.get("tricks", []))
    unseen = [(r, s) for r in range(13) for s in range(4) if (r, s) not in seen_cards(view)]
    lacks = voids(view)
    others = [s for s in order if s != me]
    wins = [0] * len(legal)
    for _ in range(30):
        pool = list(unseen)
        rng.shuffle(pool)
        hands = {me: list(hand)}
        for s in others:
            size = tricks_left - (1 if s in played_now else 0)
            fit = [c for c in pool if c[1] not in lacks.get(s, set())]
            if len(fit) < size:
                return None
            hands[s] = fit[:size]
            pool = [c for c in pool if c not in hands[s]]
        for i, a in enumerate(legal):
            c = card(a["card"])
            hands[me].remove(c)
            now = trick + [(me, c)]
            if len(now) == len(order):
                lead_suit = now[0][1][1]
                winner = max((x for x in now if x[1][1] == lead_suit), key=lambda x: x[1][0])[0]
                ok = winner == me if tricks_left == 1 else last_trick_won(hands, winner, [], order, me, tricks_left - 1)
            else:
                nxt = order[(order.index(me) + 1) % len(order)]
                ok = last_trick_won(hands, nxt, now, order, me, tricks_left)
            hands[me].append(c)
            wins[i] += ok
    best = max(range(len(legal)), key=lambda i: (wins[i], -card(legal[i]["card"])[0]))
    return legal[best]


def choose_card(view: dict, legal: list[dict], rng: random.Random) -> dict:
    if view.get("chicago_declarer") is None and len(view["hand"]) <= 3:
        pick = endgame_card(view, legal, rng)
        if pick is not None:
            return pick
    return plain_card(view, legal)


def plain_card(view: dict, legal: list[dict]) -> dict:
    options = [card(a["card"]) for a in legal]
    hand = [card(c) for c in view["hand"]]
    trick = [card(p["card"]) for p in view.get("trick", [])]
    declarer = view.get("chicago_declarer")
    pick = None
    if declarer == view["seat"]:
        pick = max(options)
    elif declarer is not None and trick:
        led = trick[0][1]
        best = max(r for r, s in trick if s == led)
        beaters = [c for c in options if c[1] == led and c[0] > best]
        pick = min(beaters) if beaters else min(options)
    elif len(hand) == 2 and trick:
        # Fourth trick: winning it cheaply pays if the card left is then the boss.
        led = trick[0][1]
        best = max(r for r, s in trick if s == led)
        unseen = {(r, s) for r in range(13) for s in range(4)} - seen_cards(view)
        for c in sorted(options):
            rest = next(x for x in hand if x != c)
            boss = not any(s == rest[1] and r > rest[0] for r, s in unseen)
            if c[1] == led and c[0] > best and boss:
                pick = c
                break
    if pick is None:
        keeper = max(hand, key=lambda c: (c[0], c[1]))
        spare = [c for c in options if c != keeper] or options
        pick = min(spare)
    return legal[options.index(pick)]


def choose(view: dict, legal: list[dict], rng: random.Random, rounds: int) -> dict:
    kind = legal[0]["type"]
    if len(legal) == 1 or view.get("phase") is None:
        return legal[0]
    if kind == "exchange":
        return choose_exchange(view, legal, rng, rounds)
    if kind == "chicago":
        call = sure_winners([card(c) for c in view["hand"]]) == 5
        return next((a for a in legal if a["call"] == call), legal[0])
    if kind == "play":
        return choose_card(view, legal, rng)
    return legal[0]


def main() -> None:
    rng = random.Random(0)
    rounds = 3
    chicago = False
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "hello", "name": "outsider", "version": "1"}
        elif kind == "game_start":
            rng = random.Random(msg["seed"])
            chicago = msg["game"] == "chicago"
            rounds = msg["rules"].get("exchanges", 3) if chicago else 0
            continue
        elif kind == "request":
            legal = msg["legal"]
            try:
                action = choose(msg["view"], legal, rng, rounds) if chicago else legal[0]
            except (KeyError, ValueError, IndexError, TypeError) as exc:
                print(f"outsider: {exc!r}; first legal action", file=sys.stderr)
                action = legal[0]
            reply = {"type": "action", "id": msg["id"], "action": action}
        elif kind == "bye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
