"""Who sits at the table: bot processes (start, handshake, line reader), the
guardian that kills them if the referee dies, and the clocks. Imports
`protocol/`, `referee.errors` and `referee.games`; never the wings above."""
