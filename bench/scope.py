"""bench/scope: what thousands of ``console-consumer-*`` groups cost once the scope leaves them out.

On a 3-broker sandbox populated as bench/service does (``--size`` partitions, 100 per topic, a group per 10
partitions committed on 25), a separate ``offsetguard serve`` with default settings and the scope
``groups: {exclude: ["console-consumer-.*"]}`` is measured as bench/service measures it (ready, complete
``/metrics``, CPU seconds per minute over ``--steady`` s with 1 % of the offsets moving every 5 s, peak
RSS, scrape latency):

1. ``baseline``: the cluster as populated;
2. ``excluded``: after ``--extra`` groups ``console-consumer-<n>`` committed, each on one partition, as
   ``kafka-console-consumer.sh`` leaves them behind (Empty groups with an offset): the target is a cost
   within 10 % of the baseline;
3. ``unscoped`` (``--unscoped``): the same cluster without the scope: what leaving them out saves.

    .venv/bin/python -m bench.scope [--size 20000] [--extra 5000] [--steady 180] [--unscoped]

Writes bench/results/scope.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, TopicPartition
from kafka.structs import OffsetAndMetadata

from bench.service_run import offsetguard_run
from bench.service_traffic import Churn, expected_committed, populate_size
from sandbox.cluster import SandboxCluster, start_sandbox

RESULTS = Path(__file__).resolve().parent / "results" / "scope.json"
SCOPE = {"groups": {"exclude": ["console-consumer-.*"]}}
TARGET = 1.10  # excluded groups cost within 10 % of the cluster without them


def console_groups(cluster: SandboxCluster, count: int) -> float:
    """``count`` groups ``console-consumer-<n>``, each committed on one of the bench topics' partitions."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=120_000)
    t0 = time.perf_counter()

    def commit(n: int) -> None:
        tp = TopicPartition(f"bench-{n % 10:04d}", n % 100)
        admin.alter_group_offsets(f"console-consumer-{n:05d}", {tp: OffsetAndMetadata(1, "", -1)})

    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(commit, range(count)))
    finally:
        admin.close()
    return round(time.perf_counter() - t0, 1)


def measure(
    cluster: SandboxCluster,
    root: Path,
    expected: dict[str, int],
    args: argparse.Namespace,
    label: str,
    scoped: bool,
) -> dict[str, Any]:
    store = root / f"store-{label}"
    shutil.rmtree(store, ignore_errors=True)
    run = offsetguard_run(
        cluster, store, expected, args, profile_s=0, label=label, cluster_extra=SCOPE if scoped else None
    )
    churn = Churn(cluster, args.size, args.churn)
    return run.run(churn) | {"churn": churn.figures()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=20_000, help="partitions")
    parser.add_argument("--extra", type=int, default=5_000, help="console-consumer-* groups added")
    parser.add_argument("--steady", type=float, default=180.0, help="seconds of steady state measured")
    parser.add_argument("--settle", type=float, default=50.0, help="seconds after complete before measuring")
    parser.add_argument("--scrape-interval", type=float, default=15.0)
    parser.add_argument("--churn", type=float, default=0.01, help="share of partitions moved every 5 s")
    parser.add_argument("--unscoped", action="store_true", help="also measure without the scope")
    parser.add_argument("--dir", help="working directory (default: a temporary one)")
    parser.add_argument("--no-write", action="store_true", help="print only (a smoke run)")
    args = parser.parse_args()
    args.interval = None  # the default collection intervals (bench.service_run reads it)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-bench-scope-"))
    t0 = time.perf_counter()
    cluster = start_sandbox(root / "sandbox", brokers=3, broker_heap="1g", timeout=300)
    out: dict[str, Any] = {"size": args.size, "extra_groups": args.extra, "scope": SCOPE}
    try:
        populate_size(cluster, args.size)
        out["populate_s"] = round(time.perf_counter() - t0, 1)
        expected = expected_committed(cluster)
        out["cluster"] = expected
        out["baseline"] = measure(cluster, root, expected, args, "baseline", scoped=True)
        out["console_groups_s"] = console_groups(cluster, args.extra)
        out["excluded"] = measure(cluster, root, expected, args, "excluded", scoped=True)
        if args.unscoped:
            out["unscoped"] = measure(cluster, root, expected, args, "unscoped", scoped=False)
    finally:
        cluster.kill()
    base, excl = out["baseline"], out["excluded"]
    out["ratios"] = {
        k: round(excl[k] / base[k], 3) if base.get(k) else None
        for k in ("cpu_s_per_min", "peak_rss_mb", "complete_s", "scrape_p99_s")
    }
    out["within_target"] = (out["ratios"]["cpu_s_per_min"] or 0) <= TARGET
    out["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    print(f"RESULT {json.dumps(out['ratios'])} within {TARGET}x: {out['within_target']}", flush=True)
    if not args.no_write:
        RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
