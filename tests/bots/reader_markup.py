"""Rich markup where a terminal might interpret it: on its stderr and in the
field name of a reply that is not valid (the failure message quotes it).
Copied under a file name that is markup too."""

import sys

from _botlib import bound_resources, first_legal, serve

bound_resources()
sys.stderr.write("[bold red]BOOM[/bold red] [link=https://example.com]click me[/link]\n")
sys.stderr.flush()


def on_request(n, msg):
    reply = first_legal(msg)
    reply["[red]x[/red]"] = "[link=https://example.com]y[/link]"
    return reply


serve("reader-markup", on_request)
