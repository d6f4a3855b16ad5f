"""bench/truth: the claim-versus-truth table of every cell of the truth matrix.

Runs ``tests/truth/test_matrix.py`` (its own 3-broker sandbox, one offsetguard runtime, every cell's real
clients and Kafka's own tools) and keeps the table it builds: per cell, what the consumers really read,
re-read, skipped and lost, what offsetguard claimed, and whether the claims were within the truth.

    .venv/bin/python -m bench.truth

Prints one line per cell and writes bench/results/truth.json (docs/truth.md explains the columns).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).parent / "results" / "truth.json"


def main() -> int:
    env = {**os.environ, "OFFSETGUARD_TRUTH_TABLE": str(OUT)}
    test = "tests/truth/test_matrix.py"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", test], env=env, check=False)
    if not OUT.exists():
        print("no table written", file=sys.stderr)
        return done.returncode or 1
    for row in json.loads(OUT.read_text())["cells"]:
        truth = "; ".join(
            f"{t['group_partition'].split()[-1]} read {t['read']} reread {t['reread']} "
            f"skipped {t['skipped']} lost {t['lost']}"
            for t in row.get("truth", [])
        )
        said = (
            ", ".join(f"{c['kind']}/{c['severity']}/{c['cause']}" for c in row.get("claims", [])) or "nothing"
        )
        print(f"{row['verdict']:>16}  {row['cell']}: {truth or row.get('reason', '')} | said: {said}")
    print(f"wrote {OUT}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
