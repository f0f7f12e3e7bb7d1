"""A starter bot in Python: the standard library only.

It answers the referee's `hello`, keeps a typed view of each request (the
dataclasses below), and plays a legal move: in a trick its lowest card
(the high ones are worth more later: in Chicago only the last trick
scores), anything else a random legal action, drawn from a generator seeded
with the game's `seed`, so a game played again is played the same. It plays
every game the referee hosts, at any number of seats, because it only ever
chooses among the request's `legal` actions.

stdout is the protocol: one JSON object per line, flushed. Logs go to
stderr. The protocol: docs/protocol.md.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

NAME = "python-starter"
VERSION = "1.0"
RANKS = "23456789TJQKA"  # low to high; a card is a rank and a suit: "Qh", "Td"
MASK = (1 << 64) - 1


class SplitMix64:
    """A small seeded generator (every starter kit uses the same one, so all
    of them choose alike for the same seed)."""

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next() % n


@dataclass(frozen=True)
class GameStart:
    game_id: int
    game: str  # "chicago" or "ghost_euchre"
    seat: int
    n_players: int
    seed: int

    @classmethod
    def parse(cls, msg: dict[str, Any]) -> GameStart:
        return cls(int(msg["game_id"]), str(msg["game"]), int(msg["seat"]), int(msg["n_players"]), int(msg["seed"]))


@dataclass(frozen=True)
class View:
    """The parts of the seat's view this bot uses (the view holds more: docs/protocol.md, sections 5.4 and 6.4)."""

    game: str
    seat: int
    phase: str  # chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
    deal: int
    hand: tuple[str, ...]
    scores: tuple[int, ...]

    @classmethod
    def parse(cls, view: dict[str, Any]) -> View:
        return cls(
            game=str(view["game"]),
            seat=int(view["seat"]),
            phase=str(view["phase"]),
            deal=int(view["deal"]),
            hand=tuple(str(card) for card in view["hand"]),
            scores=tuple(int(score) for score in view["scores"]),
        )


@dataclass(frozen=True)
class Request:
    id: int
    view: View
    legal: tuple[dict[str, Any], ...]  # ready-made actions; send one back unchanged

    @classmethod
    def parse(cls, msg: dict[str, Any]) -> Request:
        return cls(int(msg["id"]), View.parse(msg["view"]), tuple(msg["legal"]))


@dataclass(frozen=True)
class GameOver:
    game_id: int
    scores: tuple[int, ...]
    placements: tuple[int, ...]  # 1 = first, per seat
    reason: str

    @classmethod
    def parse(cls, msg: dict[str, Any]) -> GameOver:
        return cls(
            int(msg["game_id"]),
            tuple(int(s) for s in msg["scores"]),
            tuple(int(p) for p in msg["placements"]),
            str(msg["reason"]),
        )


def log(text: str) -> None:
    print(f"{NAME}: {text}", file=sys.stderr, flush=True)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()  # stdout is a pipe: an unflushed reply is a timeout


def is_card(value: object) -> bool:
    return isinstance(value, str) and value != ""


def rank(card: str) -> int:
    """0 for a two up to 12 for an ace; -1 for a rank it does not know."""
    return RANKS.find(card[0])


def choose(request: Request, rng: SplitMix64) -> dict[str, Any]:
    """The move. Improve this: the view has everything the seat may know."""
    if request.view.phase == "trick":
        plays = [a for a in request.legal if isinstance(a, dict) and a.get("type") == "play" and is_card(a.get("card"))]
        if plays:
            return min(plays, key=lambda a: rank(a["card"]))  # the first of the lowest
    return request.legal[rng.below(len(request.legal))]


def main() -> None:
    rng = SplitMix64()
    start: GameStart | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": NAME, "version": VERSION, "protocol": 1})
            elif kind == "game_start":
                start = GameStart.parse(msg)
                rng = SplitMix64(start.seed)
                log(f"game {start.game_id}: {start.game}, seat {start.seat} of {start.n_players}")
            elif kind == "request":
                request = Request.parse(msg)
                if not request.legal:
                    log(f"request {request.id} has no legal actions")
                    continue
                send({"type": "action", "id": request.id, "action": choose(request, rng)})
            elif kind == "warning":
                log(f"warning on request {msg.get('id')}: {msg.get('reason')}: {msg.get('message')}")
            elif kind == "game_over":
                over = GameOver.parse(msg)
                place = over.placements[start.seat] if start and start.seat < len(over.placements) else "?"
                log(f"game {over.game_id} over ({over.reason}): scores {list(over.scores)}, our place {place}")
            elif kind == "bye":
                return
            # anything else (events come inside requests): nothing to do
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log(f"a line this bot could not read ({type(exc).__name__}: {exc}): {line[:200]!r}")


if __name__ == "__main__":
    main()
