"""Playing games with seats: the runner of one game, matches in deal sets,
explicit deals, seeding, forfeit outcomes, the conformance check and bench.
Imports `games`, `seats`, `logs` and `stats`; never `replay`, `tournament` or `cli`."""
