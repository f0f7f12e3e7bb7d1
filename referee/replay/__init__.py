"""Reading finished games back: loading a log into frames, `verify` (re-simulate
and compare), and the terminal and HTML renderers. Imports `games`, `logs` and
`play` (for deals, seeding and the forfeit outcome); never `tournament` or `cli`."""
