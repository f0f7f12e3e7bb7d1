"""Tournaments: the TOML config, the schedule of tables and deal sets, the
SQLite results store, the runner that plays and commits games, and standings.
Imports `games`, `seats`, `logs`, `play` and `stats`; never `cli`."""
