"""The reference bots that install with the referee, each run by name:
`chicago-referee match mybot.py pimc` (docs/bots.md).

Each bot is a module run as its own process (`python -m referee.bots.pimc`)
that speaks the protocol like any other bot, so it plays through the same
referee, the same checks and, with `--sandbox`, the same sandbox. Modules:
`random_legal`, `first_legal`, `greedy` (Chicago heuristics), `euchre`
(Ghost Hand Euchre heuristics), `pimc` and `ismcts` (the search bots), and
what the search bots share: `search` (command line, clock, reward, serving),
`search_exchange`, `search_tricks`, `search_model` and `rollout` (quick
playout rules on the engine's public accessors).

Imports: the bots may import `protocol/`, the core (`referee.errors`) and
`referee.games`; nothing imports them as a library. This file imports
nothing: it is the listing of names that the seats resolve a bot command
with and the CLI shows, and every wing may read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuiltinBot:
    """A bot that comes with the referee: the name a command gives it, the
    module that runs it, and what it plays, in a few words for `--help`."""

    name: str
    module: str
    plays: str
    summary: str


BUILTIN_BOTS: dict[str, BuiltinBot] = {
    bot.name: bot
    for bot in (
        BuiltinBot("random", "referee.bots.random_legal", "every game", "a uniformly random legal action"),
        BuiltinBot("first-legal", "referee.bots.first_legal", "every game", "the first legal action, at once"),
        BuiltinBot("greedy", "referee.bots.greedy", "Chicago", "explainable heuristics"),
        BuiltinBot("euchre", "referee.bots.euchre", "Ghost Hand Euchre", "explainable heuristics"),
        BuiltinBot("pimc", "referee.bots.pimc", "both games", "Perfect Information Monte Carlo search"),
        BuiltinBot("ismcts", "referee.bots.ismcts", "both games", "Information Set Monte Carlo Tree Search"),
    )
}


def builtin_names() -> str:
    """The names as one phrase for help texts."""
    return ", ".join(BUILTIN_BOTS)
