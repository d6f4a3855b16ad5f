"""``offsetguard group CLUSTER GROUP``: one group's state, members and per-partition lag from the API."""

from __future__ import annotations

import argparse
import json
from typing import Any

from service.api.client import add_connection_arguments, client_from, segment, table
from service.api.times import rfc3339


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "group", help="show one consumer group (on-call API client)"
    )
    parser.add_argument("cluster")
    parser.add_argument("group")
    add_connection_arguments(parser)
    parser.set_defaults(func=run)


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:.0f}s"


def run(args: argparse.Namespace, send: Any = None) -> int:
    client = client_from(args, send)
    g = client.get_json(f"/api/v1/clusters/{segment(args.cluster)}/groups/{segment(args.group)}")
    if args.json:
        print(json.dumps(g, indent=2, ensure_ascii=False))
        return 0
    lag = g["lag"]
    print(
        f"group {g['group']!r} in cluster {g['cluster']}:"
        f" state {g['state'] or 'unknown'}, type {g['type'] or '-'}"
    )
    print(
        f"members {len(g['members'])}, partitions {lag['partitions']}, total lag {lag['total_lag']},"
        f" max lag {lag['max_lag']} ({_seconds(lag['max_lag_seconds']) or 'age unknown'})"
    )
    rows = [
        [
            p["topic"],
            p["partition"],
            p["committed_offset"],
            p["leader_epoch"],
            p["log_start"],
            p["log_end"],
            p["lag"],
            _seconds(p["lag_seconds"]),
            rfc3339(p["last_commit_at"]),
            p["member_id"],
        ]
        for p in g["partitions"]
    ]
    print()
    print(
        table(
            [
                "TOPIC",
                "PART",
                "COMMITTED",
                "EPOCH",
                "LOG-START",
                "LOG-END",
                "LAG",
                "LAG-AGE",
                "COMMITTED-AT",
                "MEMBER",
            ],
            rows,
        )
    )
    if g["members"]:
        print()
        members = [
            [
                m["member_id"],
                m["client_id"],
                m["host"],
                ", ".join(f"{a['topic']}-{a['partition']}" for a in m["assignment"]),
            ]
            for m in g["members"]
        ]
        print(table(["MEMBER", "CLIENT", "HOST", "ASSIGNED"], members))
    return 0
