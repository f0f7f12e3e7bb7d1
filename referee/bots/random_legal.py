"""The built-in bot `random`: a uniformly random legal action, in every game.

Its random stream is seeded from each game's `game_start.seed`, so a match
with the same seed replays exactly. The floor of the strength ladder
(docs/bots.md).
"""

from __future__ import annotations

import random

from protocol.bot import run_bot
from protocol.messages import GameStart


def main() -> None:
    rng = random.Random()

    def reseed(game_start: GameStart) -> None:
        rng.seed(game_start.seed)

    run_bot(lambda view, legal: rng.choice(legal), name="random", version="1.0", on_game_start=reseed)


if __name__ == "__main__":
    main()
