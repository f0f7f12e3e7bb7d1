"""The smallest possible bot: answers every request with its first legal action.

Uses only the standard library, so it shows the bare protocol; the referee's
benchmark uses it because it spends almost no time thinking.
"""

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
