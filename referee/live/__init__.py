"""Watching a match or a tournament while it is played.

`stream` writes the live event stream (one JSON object per line, public in
one file, hidden information in a private one; docs/live.md), `board` keeps
what a dashboard shows from those lines, `tables` makes what a live table is
sent (shared by all its viewers), `follow` tails the files and reads
the results database, `app` is the dashboard's ASGI app and `serve` runs it
all on the referee's Trio loop.

It sits above `tournament` and `web` and may import every wing below the
CLI but `human`; nothing below imports it: a match or a tournament is
watched through the `referee.play.watch` hook the CLI hands it.
"""
