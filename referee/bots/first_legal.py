"""The built-in bot `first-legal`: answers every request with its first
legal action (the cautious default every game puts first), at once.

Plain JSON and the standard library, so it spends almost no time of its own:
`bench` measures the referee with it by default.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "request":
            out.write(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}) + "\n")
            out.flush()
        elif kind == "hello":
            out.write('{"type":"hello","name":"first-legal","version":"1.0"}\n')
            out.flush()
        elif kind == "bye":
            return


if __name__ == "__main__":
    main()
