"""The game log format: the JSONL writer the runner feeds and the reader that
replay, verify and check use. Imports `protocol/` and `referee.errors` only."""
