"""bench/service_aged: the service restarted on an aged store, one code tree against another.

``bench/service`` starts from an empty store and stops within minutes, before any lag alert can fire; a
fleet with abandoned groups holds thousands of firing alerts, which cost every evaluation. This runs
``offsetguard serve`` (default settings) from each ``--trees`` source tree in turn on a fresh copy of one
aged store (``--store``: an ``offsetguard.db`` stopped minutes before, or its lag alerts resolve over
the blind spell), on the populated sandbox it was aged on, with bench/service's churn and a ``/metrics``
scrape every 15 s; after ``--warmup`` s it measures the process tree's CPU seconds per minute over
``--steady`` s and its peak RSS, and counts the firing alerts at the end. Trees alternate for
``--rounds`` rounds, so that a drift of the machine or the store shows as a difference between rounds.

    .venv/bin/python -m bench.service_aged --attach /tmp/ogpoll --store /tmp/aged/offsetguard.db \\
        --trees /tmp/before,. [--rounds 2] [--steady 180] --name my_change

The store's churn moves partitions in order from the first; lag alerts on the last partitions stay
firing for a 4-minute run. Writes ``bench/results/service_ab.json`` under ``--name``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench import proctree
from bench.service_run import free_port, terminate
from bench.service_traffic import Churn
from service.sandbox.cluster import SandboxCluster

RESULTS = Path(__file__).resolve().parent / "results" / "service_ab.json"
SCRAPE_S = 15.0


def run_tree(
    tree: Path, store: Path, cluster: SandboxCluster, size: int, args: argparse.Namespace
) -> dict[str, Any]:
    """One restart of ``tree``'s service on a copy of ``store``."""
    work = Path(tempfile.mkdtemp(prefix="og-aged-"))
    try:
        for suffix in ("", "-wal"):
            if Path(f"{store}{suffix}").exists():
                shutil.copy(f"{store}{suffix}", work / f"offsetguard.db{suffix}")
        port = free_port()
        config = {
            "clusters": [cluster.cluster_config("bench")],
            "store": {"path": str(work / "offsetguard.db")},
        }
        (work / "offsetguard.yaml").write_text(yaml.safe_dump(config))
        command = [sys.executable, "-c", "import sys; from service.cli import main; sys.exit(main())"]
        with (work / "serve.log").open("wb") as log:
            proc = subprocess.Popen(
                [*command, "serve", "--config", str(work / "offsetguard.yaml"), "--port", str(port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONPATH=str(tree)),  # its metrics worker inherits it
                cwd=tree,
            )
            try:
                return _measure(proc, port, cluster, size, args)
            finally:
                terminate(proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(
    proc: subprocess.Popen[bytes], port: int, cluster: SandboxCluster, size: int, args: argparse.Namespace
) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}"
    rss = proctree.RssPeak(proc.pid)
    churn = Churn(cluster, size, args.churn)
    stop = threading.Event()

    def scrape() -> None:
        with httpx.Client(timeout=60) as client:
            while not stop.wait(SCRAPE_S):
                with contextlib.suppress(httpx.HTTPError):  # not up yet: the next one
                    client.get(f"{url}/metrics", headers={"Accept-Encoding": "gzip"})

    scraper = threading.Thread(target=scrape, daemon=True)
    churn.start()
    scraper.start()
    try:
        time.sleep(args.warmup)
        if proc.poll() is not None:
            raise RuntimeError(f"offsetguard serve exited with {proc.returncode}")
        c0, t0 = proctree.cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.steady)
        c1, t1 = proctree.cpu_seconds(proc.pid), time.monotonic()
        body = httpx.get(f"{url}/metrics", timeout=60).text
    finally:
        stop.set()
        churn.stop()
    firing = sum(
        float(line.rsplit(" ", 1)[1])
        for line in body.splitlines()
        if line.startswith("offsetguard_alerts_firing{")
    )
    return {
        "cpu_s_per_min": round((c1 - c0) * 60.0 / (t1 - t0), 2),
        "peak_rss_mb": round(rss.stop() / 1e6, 1),
        "firing_at_end": int(firing),
    }


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
        if not (tree / "service" / "cli.py").is_file():
            parser.error(f"--trees: {tree} is not an offsetguard source tree")
    cluster = SandboxCluster.load(Path(args.attach))
    runs: dict[str, list[dict[str, Any]]] = {label(t): [] for t in trees}
    for r in range(args.rounds):
        for tree, name in zip(trees, runs, strict=True):
            figures = run_tree(tree, store, cluster, args.size, args)
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
