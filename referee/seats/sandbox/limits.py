"""What one sandboxed bot may use, and the text that says it.

A tournament's `sandbox` table, `--sandbox-limits` and the defaults become
one frozen `SandboxLimits`; every value is checked here, so a typo is an
error before anything starts, not a bot that runs with a limit nobody meant.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from referee.errors import ConfigError


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed bot may use. Sizes in MiB, CPU in seconds per process."""

    memory_mb: int = 1024
    processes: int = 64  # processes and threads together
    cpu_s: int = 600  # a match's bots live for the whole match
    file_size_mb: int = 16
    open_files: int = 256
    scratch_mb: int = 64
    env: tuple[str, ...] = ()  # names passed on from the referee's environment
    freeze_idle: bool = False  # frozen (cgroup freezer) while it is not this bot's turn

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["env"] = list(self.env)
        return d


_KEYS = {
    "memory": "memory_mb",
    "processes": "processes",
    "cpu": "cpu_s",
    "file_size": "file_size_mb",
    "open_files": "open_files",
    "scratch": "scratch_mb",
    "env": "env",
    "freeze_idle": "freeze_idle",
}
_SIZE = re.compile(r"^(\d+)\s*(m|mb|mib|g|gb|gib)?$", re.IGNORECASE)
_TIME = re.compile(r"^(\d+)\s*(s|m|min|h)?$", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LIMITS_HELP = (
    "memory=SIZE,processes=N,cpu=SECONDS,file_size=SIZE,open_files=N,scratch=SIZE,env=NAME:NAME,"
    "freeze_idle=true|false (sizes like 512M or 2G, times like 90s or 10m)"
)
_BOOLS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


def _env_names(value: object) -> tuple[str, ...]:
    names = value.split(":") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) and _ENV_NAME.match(n) for n in names):
        raise ConfigError("sandbox env: give variable names (NAME:NAME, or a list in a config)")
    return tuple(n for n in names if n)


def _flag(key: str, value: object) -> bool:
    flag = value if isinstance(value, bool) else _BOOLS.get(str(value).strip().lower())
    if flag is None:
        raise ConfigError(f"sandbox {key}: {value!r} is not true or false")
    return flag


def _mebibytes(text: str) -> int:
    """`512`, `512M`, `2G` -> MiB (0: not a size)."""
    m = _SIZE.match(text)
    if not m:
        return 0
    return int(m.group(1)) * (1024 if (m.group(2) or "m")[0].lower() == "g" else 1)


def _seconds(text: str) -> int:
    """`90`, `90s`, `10m`, `1h` -> seconds (0: not a time)."""
    m = _TIME.match(text)
    if not m:
        return 0
    return int(m.group(1)) * {"s": 1, "m": 60, "min": 60, "h": 3600}[(m.group(2) or "s").lower()]


def _limit_value(key: str, value: object) -> Any:
    if key == "env":
        return _env_names(value)
    if key == "freeze_idle":
        return _flag(key, value)
    text = str(value).strip() if not isinstance(value, bool) else ""
    is_size = _KEYS[key].endswith("_mb")
    if is_size:
        number = _mebibytes(text)
    elif key == "cpu":
        number = _seconds(text)
    else:
        number = int(text) if text.isdigit() else 0
    if number < 1:
        raise ConfigError(f"sandbox {key}: {value!r} is not a positive {'size' if is_size else 'number'}")
    return number


def limits_from_table(table: dict[str, object], base: SandboxLimits | None = None) -> SandboxLimits:
    """A config's `sandbox` table (or parsed option text) -> limits."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(f"sandbox: unknown limit {key!r}; limits: {', '.join(_KEYS)}")
        values[_KEYS[key]] = _limit_value(key, value)
    base = base or SandboxLimits()
    return SandboxLimits(**{**asdict(base), **values})


def parse_limits(text: str) -> SandboxLimits:
    """`memory=256M,processes=32,cpu=60s,env=API_KEY` -> limits (the rest default)."""
    table: dict[str, object] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"--sandbox-limits: {part!r} is not KEY=VALUE; use {LIMITS_HELP}")
        table[key.strip()] = value.strip()
    return limits_from_table(table)
