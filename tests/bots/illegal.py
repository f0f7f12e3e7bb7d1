"""Answers request number `on` (default 1; 0 = every request) with a
well-formed action that is not in the legal list: a card it does not hold."""

from _botlib import first_legal, options, serve

opts = options()
on = int(opts.get("on", 1))
CARDS = [r + s for s in "shdc" for r in "23456789TJQKA"]


def on_request(n, msg):
    if on == 0 or n == on:
        hand = set(msg["view"]["hand"])
        card = next(c for c in CARDS if c not in hand)
        action = {"type": "play", "card": card}
        assert action not in msg["legal"]
        return {"type": "action", "id": msg["id"], "action": action}
    return first_legal(msg)


serve("illegal", on_request)
