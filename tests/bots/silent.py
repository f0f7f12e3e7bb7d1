"""Reads everything and never writes a line: never answers hello."""

import sys
import time

from _botlib import options

options()
for _line in sys.stdin:
    pass
time.sleep(600)
