"""Sample bot: picks uniformly among the legal actions. Plays every game.

Uses the Python SDK of the installed package (`protocol.bot.run_bot`): a bot
is a policy function from the view and the legal actions to one of them.
"""

import random

from protocol.bot import run_bot

rng = random.Random()


def policy(view, legal):
    return rng.choice(legal)


def reseed(game_start):
    """Seed from the referee's per-game seed so matches replay exactly."""
    rng.seed(game_start.seed)


if __name__ == "__main__":
    run_bot(policy, name="random", version="1.0", on_game_start=reseed)
