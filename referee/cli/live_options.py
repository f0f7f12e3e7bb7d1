"""The dashboard options `serve`, `tournament --serve` and `match --serve` share."""

from __future__ import annotations

from typing import Annotated

import typer

from referee.cli.common import out
from referee.errors import ConfigError
from referee.seats.clock import parse_duration_ms

ServeOpt = Annotated[bool, typer.Option("--serve", help="Serve a live dashboard while playing (see docs/live.md).")]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port of the dashboard (0 picks a free one).")]
HostOpt = Annotated[
    str,
    typer.Option(
        "--host", metavar="ADDRESS", help="Address to bind; 127.0.0.1 is this machine only, 0.0.0.0 every network."
    ),
]
NoOpenOpt = Annotated[bool, typer.Option("--no-open", help="Print the dashboard's URL without opening a browser.")]
RevealOpt = Annotated[
    str | None,
    typer.Option(
        "--reveal-delay",
        metavar="DURATION",
        help="Let spectators see all cards, each only once it is this old (e.g. 60s) or its game is "
        "over; without it, hidden cards are never shown during play.",
    ),
]


def reveal_seconds(text: str | None) -> float | None:
    """--reveal-delay as seconds (None: public view only)."""
    if text is None:
        return None
    try:
        return parse_duration_ms(text) / 1000
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--reveal-delay") from None


def print_url(url: str) -> None:
    out.print(f"live dashboard: {url}", highlight=False, markup=False, soft_wrap=True)
