"""bench/service_aged: the service restarted on an aged store, one code tree against another.

``bench/service`` starts from an empty store and stops within minutes, before any lag alert can fire; a
fleet with abandoned groups holds thousands of firing alerts, which cost every evaluation. This runs
``offsetguard serve`` (default settings) from each ``--trees`` source tree in turn on a fresh copy of one
aged store (``--store``: an ``offsetguard.db`` stopped minutes before, or its lag alerts resolve over
the blind spell), on the populated sandbox it was aged on, with bench/service's churn and a ``/metrics``
scrape every 15 s (bench/service's measured run: ready, complete ``/metrics``, ``--warmup`` s of
settling), it measures the process tree's CPU seconds per minute over ``--steady`` s, its peak RSS and
scrape latency, and counts the alerts firing at its stop. Trees alternate for
``--rounds`` rounds, so that a drift of the machine or the store shows as a difference between rounds.

    .venv/bin/python -m bench.service_aged --attach /tmp/ogpoll --store /tmp/aged/offsetguard.db \\
        --trees /tmp/before,. [--rounds 2] [--steady 180] --name my_change

The store's churn moves partitions in order from the first; lag alerts on the last partitions stay
firing for a 4-minute run. Writes ``bench/results/service_ab.json`` under ``--name``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.service_run import copy_store, firing_alerts, offsetguard_run
from bench.service_traffic import Churn, expected_committed
from sandbox.cluster import SandboxCluster

RESULTS = Path(__file__).resolve().parent / "results" / "service_ab.json"
SCRAPE_S = 15.0


def run_tree(
    tree: Path, store: Path, cluster: SandboxCluster, expected: dict[str, int], args: argparse.Namespace
) -> dict[str, Any]:
    """One restart of ``tree``'s service on a copy of ``store`` (bench/service's measured run: ready,
    complete, ``--warmup`` s of settling, ``--steady`` s measured), with the alerts firing at its stop."""
    work = Path(tempfile.mkdtemp(prefix="og-aged-"))
    try:
        copy_store(store, work)
        run = offsetguard_run(
            cluster, work, expected, args, profile_s=0, label=f"aged-{tree.name}", tree=tree
        )
        out = run.run(Churn(cluster, args.size, args.churn))
        return out | {"firing_alerts_at_stop": firing_alerts(work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def label(tree: Path) -> str:
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"{head.stdout.strip() or '?'} ({tree})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--attach", required=True, help="the populated sandbox the store was aged on")
    parser.add_argument("--store", required=True, help="the aged offsetguard.db")
    parser.add_argument("--trees", required=True, help="source trees to compare, comma-separated")
    parser.add_argument("--name", required=True, help="the comparison's key in service_ab.json")
    parser.add_argument("--size", type=int, default=20000, help="partitions the sandbox was populated with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=50.0)
    parser.add_argument("--steady", type=float, default=180.0)
    parser.add_argument("--churn", type=float, default=0.01)
    args = parser.parse_args()
    store = Path(args.store)
    trees = [Path(t).resolve() for t in args.trees.split(",") if t.strip()]
    if args.rounds < 1 or args.steady <= 0 or args.warmup < 0:
        parser.error("--rounds must be at least 1, --steady positive, --warmup not negative")
    if not store.is_file():
        parser.error(f"--store {store}: no such store file")
    for tree in trees:
        if not any((tree / path).is_file() for path in ("cli/main.py", "service/cli.py")):
            parser.error(f"--trees: {tree} is not an offsetguard source tree")
    args.settle, args.scrape_interval, args.interval = args.warmup, SCRAPE_S, None  # as ServiceRun reads them
    cluster = SandboxCluster.load(Path(args.attach))
    expected = expected_committed(cluster)
    runs: dict[str, list[dict[str, Any]]] = {label(t): [] for t in trees}
    for r in range(args.rounds):
        for tree, name in zip(trees, runs, strict=True):
            figures = run_tree(tree, store, cluster, expected, args)
            runs[name].append(figures)
            print(f"[round {r + 1}] {name}: {json.dumps(figures)}", flush=True)
    result = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    result[args.name] = {
        "setup": f"bench/service_aged {' '.join(sys.argv[1:])}",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": runs,
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
