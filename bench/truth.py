"""bench/truth: the claim-versus-truth table of every cell of the truth matrix.

Runs ``tests/truth/test_matrix.py`` (its own 3-broker sandbox, one offsetguard runtime, every cell's real
clients and Kafka's own tools) and keeps the table it builds: per cell, what the consumers really read,
re-read, skipped and lost, what offsetguard claimed, and whether the claims were within the truth.

    .venv/bin/python -m bench.truth            # run the matrix, write the table
    .venv/bin/python -m bench.truth --docs     # the table of docs/truth.md, from bench/results/truth.json

Prints one line per cell and writes bench/results/truth.json (docs/truth.md explains the columns).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).parent / "results" / "truth.json"
DOCS = Path(__file__).parent.parent / "docs" / "truth.md"
MARK = "<!-- made by"


def docs() -> None:
    """Replace everything below the marker line of docs/truth.md with the table of every cell."""
    text = DOCS.read_text()
    head = text[: text.index(MARK)]
    mark = text[text.index(MARK) :].splitlines()[0]
    lines = [
        "| cell (operation.client.group kind.auto.offset.reset) | what the consumers did "
        "| what offsetguard said |",
        "|---|---|---|",
    ]
    for row in json.loads(OUT.read_text())["cells"]:
        did = "<br>".join(_truth(t) for t in row.get("truth", [])) or row.get("reason", "")
        claims = [c for c in row.get("claims", []) if c["kind"] != "config_risk"]
        said = "<br>".join(_claim(c) for c in claims) or "nothing"
        verdict = "" if row["verdict"] == "within the truth" else f" **{row['verdict']}**"
        lines.append(f"| `{row['cell']}`{verdict} | {did} | {said} |")
    DOCS.write_text(head + mark + "\n\n" + "\n".join(lines) + "\n")


def _truth(t: dict[str, object]) -> str:
    where = str(t["group_partition"]).rsplit("[", 1)[-1].rstrip("]")
    parts = [f"{t[k]} {k}" for k in ("read", "reread", "skipped", "lost", "pending") if t[k] or k == "read"]
    return f"p{where}: " + ", ".join(parts).replace("reread", "re-read")


def _claim(c: dict[str, object]) -> str:
    magnitude = c["magnitude"] if isinstance(c["magnitude"], dict) else {}
    figures = ", ".join(f"{k} {v}" for k, v in magnitude.items() if v)
    return f"{c['kind']} {c['severity']} ({c['cause']}){': ' + figures if figures else ''}"


def main() -> int:
    if "--docs" in sys.argv[1:]:
        docs()
        print(f"wrote {DOCS}")
        return 0
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
