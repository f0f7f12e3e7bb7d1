"""The web wing: the pages a command serves to people in a browser.

One stack for every page: Starlette on hypercorn's Trio worker, on the
referee's own loop. `security` (the `Host` check, the security headers,
errors as one line with an id), `sessions` (sessions behind `HttpOnly`,
`SameSite=Strict` cookies, CSRF tokens) and `templates` (Jinja2 that escapes
by default) are shared by every page set; `gate` is the door of a command's
pages (the printed URL good once, then the session cookie) and `server`
serves a page set behind it, with capped event streams. `app` is the browser
seat's routes, `session` its `Player`, `table` plays a table with it; the
dashboard's routes are `referee.live.app`; the arena's pages are the
`arena_*` modules and `page_renderer`. Static files come from
`referee/assets`. May import `protocol/`, `games`, `stats`, `seats`, `logs`,
`play`, `replay`, `tournament` and `arena`; only `cli` and `live` import it."""
