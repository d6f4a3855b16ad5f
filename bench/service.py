"""bench/service: the whole service as users run it, on a populated sandbox, scraped as Prometheus would.

For each size it builds (or attaches to) a 1-controller + 3-broker sandbox (``--brokers``) with ``SIZE``
partitions (100 per topic), ``SIZE/10`` groups each committed on 25 partitions (bench/poll's populate),
then runs a separate ``offsetguard serve`` with default settings (store and tail on) and measures, for its
whole process tree (the metrics render worker included, when ``metrics.render_worker`` is on):

- seconds from start to ``/readyz`` and to the first complete ``/metrics`` (every committed
  group-partition has its ``offsetguard_group_lag_messages`` series), cold (empty store) and warm (a
  restart on the same store), and the latency of that first scrape;
- CPU seconds per minute over ``--steady`` seconds of steady state while ``/metrics`` is scraped every
  ``--scrape-interval`` seconds and ``--churn`` of the partitions get a message and their groups a new
  commit every 5 s (the "1 % of the offsets moved" cycle), cold and warm alike; steady state starts
  ``--settle`` seconds after the picture is complete (scraped all along), past the start's standing
  renders, and the CPU seconds of the start up to then are reported apart (``start_cpu_s``);
- peak resident memory (sum over the tree), scrape latency p50/p99/max, body bytes per family set;
- where the CPU goes: a py-spy profile of the running service summarised by offsetguard module (the
  cold run's; ``--profile-warm``: the warm run's too).

With ``--kminion PATH`` (a kminion binary you built from its source; nothing here builds it) the same run
measures kminion (adminApi, partition granularity) on the same cluster, alone, and states the ratios.

    .venv/bin/python -m bench.service [--sizes 5000,20000,50000] [--steady 300] [--kminion PATH]
    .venv/bin/python -m bench.service --sizes 20000 --attach /tmp/ogpoll   # a bench/poll --keep sandbox
    ... --aged /path/to/offsetguard.db   # also: restarted on a long run's store (firing alerts, history)
    ... --interval 15   # offsets and committed collected every 15 s: kminion's rate at a 15 s scrape
    ... --sizes 100000 --brokers 6   # ~17,000 partitions a broker, as 50,000 on 3

Writes bench/results/service.json (merged per size, so sizes can be run one at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import proctree
from bench.service_run import ServiceRun, copy_store, firing_alerts, kminion_run, offsetguard_run
from bench.service_traffic import Churn, expected_committed, populate_size
from sandbox.cluster import SandboxCluster, start_sandbox
from service.metrics.standing import WINDOW_S

CHURN = 0.01  # share of the partitions moved every 5 s by default
# Steady state starts this long after the picture is complete: past the standing renders a service keeps
# for its first minutes, which are part of its start, and one scrape more. What the start cost up to then
# is reported apart (start_cpu_s over start_window_s).
SETTLE_S = WINDOW_S + 15.0
RESULTS = Path(__file__).resolve().parent / "results"


def measure_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-bench-service-"))
    sandbox_dir = Path(args.attach) if args.attach else root / f"sandbox-{size}"
    t0 = time.perf_counter()
    if args.attach:
        cluster = SandboxCluster.load(sandbox_dir)
    else:
        cluster = start_sandbox(
            sandbox_dir, brokers=args.brokers, broker_heap="1g", timeout=300, daemon=args.keep
        )
        populate_size(cluster, size)
    print(f"[{size}] sandbox ready in {time.perf_counter() - t0:.0f} s", flush=True)
    out: dict[str, Any] = {"size": size}
    try:
        expected = expected_committed(cluster)
        out["cluster"] = expected
        print(f"[{size}] cluster: {expected}", flush=True)
        churn = Churn(cluster, size, args.churn) if args.churn > 0 else None
        store = root / f"store-{size}"
        # the alerts firing when each run stopped: a cluster with lag left behind (groups no longer
        # committing) fires lag alerts once its lag is old enough, and the runs after that pay for them
        cold = offsetguard_run(cluster, store, expected, args, profile_s=args.profile, label="cold")
        out["offsetguard_cold"] = cold.run(churn) | {"firing_alerts_at_stop": firing_alerts(store)}
        warm_profile = args.profile if args.profile_warm else 0
        warm = offsetguard_run(cluster, store, expected, args, profile_s=warm_profile, label="warm")
        out["offsetguard_warm"] = warm.run(churn) | {"firing_alerts_at_stop": firing_alerts(store)}
        if args.aged:
            out["offsetguard_aged"] = aged_run(cluster, root / f"store-aged-{size}", expected, churn, args)
        if args.kminion:
            where = root / f"kminion-{size}"
            peer: ServiceRun = kminion_run(Path(args.kminion), cluster, where, expected, args)
            out["kminion"] = peer.run(churn)
            out["ratios_vs_kminion"] = ratios(out["offsetguard_cold"], out["kminion"])
        if churn is not None:
            out["churn"] = churn.figures()
    finally:
        if not (args.keep or args.attach):
            cluster.down()
    return out


def aged_run(
    cluster: SandboxCluster,
    store: Path,
    expected: dict[str, int],
    churn: Churn | None,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Steady state restarted on a copy of ``args.aged``: a store from a long run, with its firing alerts
    (abandoned groups' lag) and hours of history, which a fresh store never reaches in a benchmark run."""
    shutil.rmtree(store, ignore_errors=True)
    copy_store(Path(args.aged), store)
    out = offsetguard_run(cluster, store, expected, args, profile_s=0, label="aged").run(churn)
    return out | {"firing_alerts_at_stop": firing_alerts(store)}


def ratios(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, float | None]:
    def r(key: str) -> float | None:
        a, b = ours.get(key), theirs.get(key)
        return round(a / b, 2) if isinstance(a, int | float) and isinstance(b, int | float) and b else None

    return {
        k: r(k)
        for k in ("cpu_s_per_min", "peak_rss_mb", "complete_s", "scrape_p99_s", "body_bytes", "scrape_p50_s")
    }


def summary_line(size: int, figures: dict[str, Any]) -> str:
    parts = []
    for name in ("offsetguard_cold", "offsetguard_warm", "offsetguard_aged", "kminion"):
        f = figures.get(name)
        if f:
            parts.append(
                f"{name}: ready {f.get('ready_s')} s, complete {f.get('complete_s')} s, "
                f"{f.get('cpu_s_per_min')} CPU s/min, peak RSS {f.get('peak_rss_mb')} MB, "
                f"scrape p50/p99/max {f.get('scrape_p50_s')}/{f.get('scrape_p99_s')}/"
                f"{f.get('scrape_max_s')} s, "
                f"body {f.get('body_bytes')} B"
            )
            if "firing_alerts_at_stop" in f:
                parts[-1] += f", {f['firing_alerts_at_stop']} alerts firing at stop"
    return f"RESULT {size} partitions: " + "; ".join(parts)


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """``--kminion``, ``--dir``, ``--attach`` and ``--keep``: the peer, where to work and which sandbox."""
    parser.add_argument("--kminion", help="a kminion binary to measure on the same cluster")
    parser.add_argument("--dir", help="working directory (default: a temporary one)")
    parser.add_argument("--attach", help="reuse the populated sandbox running in this directory")
    parser.add_argument("--keep", action="store_true", help="leave each sandbox running")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000,50000", help="partition counts, comma-separated")
    parser.add_argument("--steady", type=float, default=300.0, help="seconds of steady state measured")
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE_S,
        help="seconds after complete before measuring (default: past the standing renders of the start)",
    )
    parser.add_argument("--scrape-interval", type=float, default=15.0)
    parser.add_argument(
        "--brokers",
        type=int,
        default=3,
        help="brokers of the sandbox (a broker keeps a file open per partition: at 100,000 partitions, 6"
        " stay under an open-files limit of 20,000)",
    )
    parser.add_argument("--churn", type=float, default=CHURN, help="share of partitions moved every 5 s")
    parser.add_argument(
        "--profile", type=float, default=60.0, help="py-spy seconds at the start of steady state (0: none)"
    )
    parser.add_argument(
        "--profile-warm",
        action="store_true",
        help="profile the warm run too (the firing alerts' costs show there; each its own profile file)",
    )
    add_sandbox_arguments(parser)
    parser.add_argument("--aged", help="offsetguard.db of a long run on this cluster: a restart on it too")
    parser.add_argument(
        "--interval",
        type=float,
        help="seconds between offsets and committed collections instead of the default 5 (15: kminion's"
        " rate when scraped every 15 s, as it collects once a scrape)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.attach and len(sizes) != 1:
        parser.error("--attach goes with exactly one size")
    if args.interval is not None and args.interval <= 0:
        parser.error("--interval must be positive")
    if args.aged and not Path(args.aged).is_file():
        parser.error(f"--aged {args.aged}: no such store file")

    path = RESULTS / "service.json"
    result: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    result.update(
        {
            "benchmark": "service",
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "py_spy": proctree.profile_available(),
        }
    )
    by_size = result.setdefault("sizes", {})
    for size in sizes:
        figures = measure_size(size, args)
        figures["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        figures["setup"] = {k: v for k, v in vars(args).items() if k not in ("sizes",)}
        # the default churn keys by size alone; another churn (a busy cluster: 1.0) is kept beside it
        key = str(size) if args.churn == CHURN else f"{size}-churn-{args.churn:g}"
        by_size[key if args.interval is None else f"{key}-interval-{args.interval:g}"] = figures
        RESULTS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(summary_line(size, figures), flush=True)


if __name__ == "__main__":
    main()
