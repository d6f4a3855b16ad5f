"""``offsetguard sandbox ...``: run the sandbox Kafka as daemons that outlive the command.

Every sub-command takes ``--dir`` (default ``.sandbox/default``), where ``sandbox.json`` records the nodes,
and prints JSON on stdout::

    offsetguard sandbox up --brokers 3 --dir DIR     # format, start, wait; prints bootstrap/metrics URLs
    offsetguard sandbox up --security sasl_ssl       # or mtls: a secured client listener, an authorizer
    offsetguard sandbox up --kafka-version 3.9 --mode zookeeper   # the version matrix (see versions.py)
    offsetguard sandbox status --dir DIR             # every node, alive or not (and the client settings)
    offsetguard sandbox stop-broker 2 --dir DIR      # SIGTERM, wait for exit
    offsetguard sandbox start-broker 2 --dir DIR     # same ports, wait until registered
    offsetguard sandbox kill-broker 2 --dir DIR      # SIGKILL
    offsetguard sandbox down [--purge] --dir DIR     # stop everything; --purge also deletes DIR
    offsetguard sandbox jars --kafka-version 3.3     # resolve a release's jars (--all: every release)
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.config import SECURITY_MODES as MODES
from sandbox.config import sandbox_home
from sandbox.versions import DEFAULT_VERSION, RELEASES, ensure_jars, release
from sandbox.versions import MODES as MODES_KAFKA

if TYPE_CHECKING:  # imported when a command runs: every offsetguard command registers these
    from sandbox.cluster import SandboxCluster

DEFAULT_DIR = ".sandbox/default"


def _print(data: dict[str, Any]) -> None:
    print(json.dumps(data, indent=2))


def _load(directory: Path) -> SandboxCluster:
    from sandbox.cluster import SandboxCluster

    return SandboxCluster.load(directory)


def _up(args: argparse.Namespace) -> int:
    from sandbox.cluster import start_sandbox

    cluster = start_sandbox(
        args.dir,
        args.brokers,
        offsets_partitions=args.offsets_partitions,
        daemon=True,
        timeout=args.timeout,
        features=args.feature,
        secure=args.security,
        kafka_version=args.kafka_version,
        mode=args.mode,
    )
    _print(cluster.describe())
    return 0


def _status(args: argparse.Namespace) -> int:
    status = _load(args.dir).status()
    _print(status)
    return 0


def _stop_broker(args: argparse.Namespace) -> int:
    cluster = _load(args.dir)
    cluster.stop_broker(args.id)
    _print(cluster.status())
    return 0


def _start_broker(args: argparse.Namespace) -> int:
    cluster = _load(args.dir)
    cluster.start_broker(args.id, timeout=args.timeout)
    _print(cluster.status())
    return 0


def _kill_broker(args: argparse.Namespace) -> int:
    cluster = _load(args.dir)
    cluster.kill_broker(args.id)
    _print(cluster.status())
    return 0


def _down(args: argparse.Namespace) -> int:
    cluster = _load(args.dir)
    cluster.down()
    status = cluster.status()
    if args.purge:
        shutil.rmtree(cluster.dir)
        status["purged"] = True
    _print(status)
    return 0


def _jars(args: argparse.Namespace) -> int:
    home = sandbox_home()
    wanted = list(RELEASES.values()) if args.all else [release(args.kafka_version)]
    _print({r.version: str(ensure_jars(home, r)) for r in wanted})
    return 0


def register(sub: Any) -> None:
    """Add the ``sandbox`` command and its sub-commands to ``sub`` (an argparse subparsers object)."""
    parser = sub.add_parser("sandbox", help="run a local KRaft Kafka for tests and demos")
    commands = parser.add_subparsers(dest="sandbox_command", required=True, metavar="ACTION")

    def action(name: str, func: Any, help: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = commands.add_parser(name, help=help)
        p.add_argument("--dir", type=Path, default=Path(DEFAULT_DIR), help="sandbox directory")
        p.set_defaults(func=func)
        return p

    up = action("up", _up, "format and start a fresh sandbox, wait until every broker is registered")
    up.add_argument("--brokers", type=int, choices=[1, 3], default=1)
    up.add_argument("--offsets-partitions", type=int, default=10, help="__consumer_offsets partitions")
    up.add_argument(
        "--security",
        choices=MODES,
        default="plaintext",
        help="client listener: plaintext, SASL_SSL with SCRAM-SHA-512, or mutual TLS (with an authorizer)",
    )
    up.add_argument(
        "--kafka-version",
        choices=[v for r in RELEASES.values() for v in (r.line, r.version)],
        default=DEFAULT_VERSION,
        help=f"the Kafka release to run (default {DEFAULT_VERSION}); others are resolved with Maven first",
    )
    up.add_argument("--mode", choices=MODES_KAFKA, default="kraft", help="kraft, or zookeeper (3.x only)")
    up.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the brokers")
    up.add_argument(
        "--feature",
        action="append",
        default=[],
        metavar="NAME=LEVEL",
        help="format-time feature level, repeatable (e.g. eligible.leader.replicas.version=0)",
    )
    action("status", _status, "show every node and whether it runs")
    for name, func, what in (
        ("stop-broker", _stop_broker, "stop a broker (SIGTERM, controlled shutdown)"),
        ("start-broker", _start_broker, "start a stopped broker on its old ports"),
        ("kill-broker", _kill_broker, "kill a broker (SIGKILL)"),
    ):
        p = action(name, func, what)
        p.add_argument("id", type=int, help="broker id")
        if name == "start-broker":
            p.add_argument("--timeout", type=float, default=120.0)
    jars = action("jars", _jars, "resolve a Kafka release's jars with Maven (cached in ~/.m2)")
    jars.add_argument("--kafka-version", default=DEFAULT_VERSION, help="a release of the version matrix")
    jars.add_argument("--all", action="store_true", help="every release of the version matrix")
    down = action("down", _down, "stop every node")
    down.add_argument("--purge", action="store_true", help="also delete the sandbox directory")
