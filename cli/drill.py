"""``offsetguard drill KIND ...``: cause incidents on purpose and check the running service alerts on them.

Each drill acts only on a topic and a group it creates (``offsetguard-drill-<kind>-<id>``), waits for the
alert through the service's API (and for its notifications, when receivers are configured), acknowledges
it as a drill, deletes what it created and prints PASS or FAIL. The exit code is 0 only if every drill
passed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from collectors.errors import ConfigError
from collectors.settings import ClusterSettings
from drills.brokers import Brokers
from drills.kafka_io import DrillKafka
from drills.kinds import ALL, SPECS, chosen
from drills.model import DrillResult
from drills.runner import Options, run_drill
from drills.watch import ApiWatch
from service.api.client import add_connection_arguments, client_from, table
from service.settings import load_settings

DEFAULTS = Options()


def register(sub: Any) -> None:
    kinds = ", ".join(f"{s.name} ({s.summary})" for s in SPECS.values())
    parser: argparse.ArgumentParser = sub.add_parser(
        "drill",
        help="cause an incident on a drill topic and check that the service alerts",
        description=f"Drill kinds: {kinds}. '{ALL}': every kind safe on a live cluster but stall.",
    )
    parser.add_argument(
        "kinds", nargs="+", metavar="KIND", choices=[*SPECS, ALL], help=f"{', '.join(SPECS)} or {ALL}"
    )
    add_connection_arguments(parser)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", type=Path, help="the service's YAML settings (the cluster to drill on)")
    where.add_argument("--sandbox", metavar="DIR", help="a running sandbox (make run's: .sandbox/run)")
    parser.add_argument("--cluster", help="with --config: the cluster's name there (default: the first)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULTS.timeout_s,
        help="seconds to wait for each alert (%(default)s)",
    )
    parser.add_argument(
        "--notify-timeout",
        type=float,
        default=DEFAULTS.notify_timeout_s,
        help="seconds to wait for notifications (%(default)s)",
    )
    parser.add_argument(
        "--lag-messages",
        type=int,
        default=DEFAULTS.lag_messages,
        help="records the lag drill produces (above the lag limit)",
    )
    parser.set_defaults(func=run)


def cluster_of(args: argparse.Namespace) -> ClusterSettings:
    if args.sandbox:
        from sandbox import security
        from sandbox.cluster import SandboxCluster

        return SandboxCluster.load(Path(args.sandbox)).cluster_settings("sandbox", principal=security.ADMIN)
    clusters = load_settings(args.config).clusters
    if not clusters:
        raise ConfigError("no clusters configured", field="clusters")
    if args.cluster is None:
        return clusters[0]
    for c in clusters:
        if c.name == args.cluster:
            return c
    raise ConfigError(f"no cluster {args.cluster!r} in {args.config}", field="clusters")


def brokers_of(args: argparse.Namespace) -> Brokers | None:
    """Broker control for the drills that stop brokers: a sandbox's, never a configured cluster's."""
    if not args.sandbox:
        return None
    from drills.brokers import SandboxBrokers
    from sandbox.cluster import SandboxCluster

    return SandboxBrokers(SandboxCluster.load(Path(args.sandbox)))


def run(args: argparse.Namespace, send: Any = None) -> int:
    if args.timeout <= 0 or args.notify_timeout < 0 or args.lag_messages < 1:
        raise ConfigError("--timeout must be > 0, --notify-timeout >= 0 and --lag-messages >= 1")
    names = chosen(args.kinds)
    cluster = cluster_of(args)
    watch = ApiWatch(client_from(args, send), cluster.name)
    options = Options(
        timeout_s=args.timeout, notify_timeout_s=args.notify_timeout, lag_messages=args.lag_messages
    )
    kafka = DrillKafka(cluster, brokers_of(args))
    results: list[DrillResult] = []
    try:
        for kind in names:
            results.append(run_drill(SPECS[kind], kafka, watch, options))
            if not args.json:
                r = results[-1]
                print(f"{r.drill}: {'PASS' if r.passed else 'FAIL'} ({r.detail})", flush=True)
    finally:
        kafka.close()
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        print(render(results))
    return 0 if results and all(r.passed for r in results) else 1


def render(results: list[DrillResult]) -> str:
    rows = [
        [
            r.drill,
            r.expected,
            _seen(r),
            ", ".join(f"{k}={v}" for k, v in sorted(r.magnitude.items()) if v is not None) or None,
            None if r.detection_latency_s is None else f"{r.detection_latency_s:.1f} s",
            r.notification
            if r.notification_latency_s is None
            else f"{r.notification} in {r.notification_latency_s:.1f} s",
            "PASS" if r.passed else "FAIL",
        ]
        for r in results
    ]
    headers = ["DRILL", "EXPECTED", "SEEN", "MAGNITUDE", "DETECTED IN", "NOTIFIED", "RESULT"]
    return table(headers, rows)


def _seen(r: DrillResult) -> str | None:
    if r.seen_kind is not None:
        return f"{r.seen_kind}/{r.seen_severity}"
    return "none" if r.expected == "none" and r.passed else None
