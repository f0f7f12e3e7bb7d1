"""Seeds derived from a master seed: stable across runs, versions and machines."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from `seed` and labels, e.g. derive_seed(s, "deal-set", 3)."""
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
