"""The `chicago-referee` command line: thin command modules that parse options,
build configs, run the async work with `trio.run`, and print the results.
`common` holds what they share; each other module is one command group and
imports only `common` and the wings below the CLI."""

from __future__ import annotations

from referee.cli import arena, arena_final, doctor, match, one_bot, play, replay, serve, tournament  # noqa: F401  (importing a command module registers its commands)
from referee.cli.common import app

__all__ = ["app"]
