"""Deterministic bot: `det_bot.py MARKER salt=S [think=SECONDS]`. Picks
`legal[sha256(S:game_id:request id) % n]`, so a game's result depends only
on its spec, whichever process or machine plays it; `think` sleeps before
each reply (games that last long enough to lose a worker in the middle)."""

import hashlib
import time

from _botlib import bound_resources, options, serve

bound_resources()
opts = options()
salt = opts.get("salt", "x")
think = float(opts.get("think", 0))


def on_request(n, msg):
    if think:
        time.sleep(think)
    legal = msg["legal"]
    h = hashlib.sha256(f"{salt}:{msg['game_id']}:{msg['id']}".encode()).digest()
    return {"type": "action", "id": msg["id"], "action": legal[int.from_bytes(h[:4], "big") % len(legal)]}


serve("det", on_request)
