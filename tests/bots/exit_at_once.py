"""Exits with status 3 before reading the hello."""

import sys

from _botlib import options

options()
sys.stderr.write("exit_at_once: giving up before hello\n")
sys.exit(3)
