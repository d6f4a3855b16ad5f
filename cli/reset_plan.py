"""``offsetguard reset-plan CLUSTER GROUP --time T``: the CSV that restores the offsets committed at T.

``--format kafka`` prints only the ``topic,partition,offset`` lines Kafka's tool accepts (the commands to
apply it go to stderr); the default ``annotated`` plan is for review. ``--out FILE`` writes it to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from service.api.client import add_connection_arguments, client_from, segment


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "reset-plan", help="offsets committed at a time, as a kafka-consumer-groups --from-file CSV"
    )
    parser.add_argument("cluster")
    parser.add_argument("group")
    parser.add_argument("--time", required=True, help="RFC 3339 or epoch seconds")
    parser.add_argument("--format", choices=["annotated", "kafka"], default="annotated")
    parser.add_argument("--out", type=Path, help="write the CSV here instead of stdout")
    add_connection_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, send: Any = None) -> int:
    client = client_from(args, send)
    path = f"/api/v1/clusters/{segment(args.cluster)}/groups/{segment(args.group)}/reset-plan"
    body, headers = client.get(path, {"time": args.time, "format": args.format})
    text = body.decode("utf-8")
    warnings = int({k.lower(): v for k, v in headers.items()}.get("x-offsetguard-warnings", "0"))
    if args.format == "kafka":
        annotated, _ = client.get(path, {"time": args.time, "format": "annotated"})
        commands = [line[4:] for line in annotated.decode("utf-8").splitlines() if line.startswith("#   ")]
        file = str(args.out) if args.out else "reset-plan.csv"
        for command in commands:
            print(command.replace("--from-file reset-plan.csv", f"--from-file {file}"), file=sys.stderr)
    if args.json:
        rows = [line.split(",", 3) for line in text.splitlines() if line and not line.startswith("#")]
        out = [
            {
                "topic": r[0],
                "partition": int(r[1]),
                "offset": int(r[2]),
                "warning": (r[3] if len(r) > 3 else ""),
            }
            for r in rows
        ]
        print(json.dumps({"warnings": warnings, "offsets": out}, indent=2, ensure_ascii=False))
    elif args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}: {warnings} warning(s)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
