"""`python -m referee.cli` runs the command line."""

from referee.cli import app

app()
