"""The web wing: the ASGI app and server for people in a browser.

`server` starts an ASGI app on the referee's Trio loop (hypercorn's Trio
worker): 127.0.0.1 unless told otherwise, an unguessable token in every URL,
the URL printed and a browser opened; a later dashboard reuses it. `app`
routes one seat's page, its event stream and its choices; `session` is the
browser seat's `Player`; `table` plays a table with it. Static files come
from `referee/assets`. May import `protocol/`, `games`, `stats`, `seats`,
`logs` and `play`; only `cli` imports it."""
