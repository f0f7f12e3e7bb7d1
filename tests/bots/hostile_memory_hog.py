"""Hostile: on its first request it tries to hold `mb=` MiB (touched, so
really used). The sandbox's memory limit must stop it: `memory_limit`."""

from _botlib import marker, options, serve

opts = options()
held = []


def hog(n: int, msg: dict) -> None:
    held.append(b"x" * (int(opts.get("mb", "512")) << 20))
    return None


serve(f"memory-hog {marker()}", hog)
