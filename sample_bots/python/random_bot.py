"""Sample bot: picks uniformly among the legal actions. Plays every game."""

import random
import sys
from pathlib import Path

try:
    from protocol.bot import run_bot
except ImportError:  # running from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import run_bot

rng = random.Random()


def policy(view, legal):
    return rng.choice(legal)


def reseed(game_start):
    """Seed from the referee's per-game seed so matches replay exactly."""
    rng.seed(game_start.seed)


if __name__ == "__main__":
    run_bot(policy, name="random", version="1.0", on_game_start=reseed)
