"""``offsetguard alerts``: alerts from the API, newest first, as a table (``--json`` for scripts)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from service.api.client import add_connection_arguments, client_from, table
from service.api.times import rfc3339


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("alerts", help="list alerts (on-call API client)")
    add_connection_arguments(parser)
    parser.add_argument("--status", choices=["firing", "resolved"], default="firing", help="default: firing")
    parser.add_argument("--all", action="store_true", help="firing and resolved")
    for name in ("kind", "severity", "cluster", "group", "topic"):
        parser.add_argument(f"--{name}", help=f"only this {name}")
    parser.add_argument("--since", help="updated at or after (RFC 3339 or epoch seconds)")
    parser.add_argument("--limit", type=int, default=50)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, send: Any = None) -> int:
    client = client_from(args, send)
    params = {
        "status": None if args.all else args.status,
        "kind": args.kind,
        "severity": args.severity,
        "cluster": args.cluster,
        "group": args.group,
        "topic": args.topic,
        "since": args.since,
        "limit": args.limit,
    }
    page = client.get_json("/api/v1/alerts", params)
    if args.json:
        print(json.dumps(page, indent=2, ensure_ascii=False))
        return 0
    rows = [
        [
            a["id"],
            a["severity"],
            a["status"] + (" (acked)" if a["ack"] else ""),
            a["kind"],
            a["cluster"],
            a["group"],
            None
            if a["topic"] is None
            else f"{a['topic']}-{a['partition']}"
            if a["partition"] is not None
            else a["topic"],
            rfc3339(a["started_at"]),
            a["summary"],
        ]
        for a in page["alerts"]
    ]
    print(
        table(["ID", "SEVERITY", "STATUS", "KIND", "CLUSTER", "GROUP", "WHERE", "STARTED", "SUMMARY"], rows)
    )
    if page["next_cursor"]:
        print(f"(more: --limit above {args.limit})")
    return 0
