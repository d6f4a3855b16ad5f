"""``bench/soak`` (issue 13): an hour of normal operations on the 3-broker sandbox, then real incidents.

50 groups of real consumers (kafka-python, aiokafka, librdkafka and the Java client, classic and KIP-848
protocol; each journaling what it read) with steady traffic, watched by a
separate ``offsetguard serve`` (default settings), while a schedule performs what operators do every day:
consumer rolling restarts and scaling, broker rolling restarts, controller restarts and a controller
quorum loss, preferred-leader elections, a partition reassignment, topic creation and deletion, admin
offset deletion, group deletion, a whole-cluster outage; retention deletes consumed data, a compacted
topic is cleaned and Empty groups' offsets expire (``offsets.retention.minutes=1``) all along. Every
warning/critical alert is a false page (printed with its evidence) but ``collector_failure`` during and
right after the outage and the quorum loss. Then injected incidents (see :mod:`bench.soak.incidents`)
must each be caught with the right kind and magnitude. Last, every finding is judged against what the
consumers really read (:mod:`bench.soak.truth`: no claim above the truth, no certain loss missed, no page
without harm). Writes ``bench/results/soak.json``.

    python -m bench.soak [--minutes 60] [--gap 60] [--dir D]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.soak.run import Plan, soak

RESULTS = Path(__file__).parent.parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="minutes of operations")
    parser.add_argument("--gap", type=float, default=60.0, help="seconds between two operations")
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--outage", type=float, default=150.0, help="seconds every broker stays down")
    parser.add_argument("--dir", help="working directory (default: a temporary one)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.ERROR)  # restarts and outages are expected here
    logging.getLogger("httpx").setLevel(logging.WARNING)
    plan = Plan(minutes=args.minutes, gap=args.gap, groups=args.groups)
    plan = replace(plan, timing=replace(plan.timing, outage=args.outage))
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-soak-"))
    result = {
        "benchmark": "soak",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count()},
        **soak(plan, workdir),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "soak.json").write_text(json.dumps(result, indent=2) + "\n")
    for page in result["false_pages"]:
        print("FALSE PAGE", json.dumps(page), flush=True)
    for problem in result.get("truth_problems", []):
        print("BEYOND THE TRUTH", problem, flush=True)
    print(
        f"RESULT {result['duration_s'] / 60:.0f} min, operations {result['operations']}, "
        f"false pages {result['false_page_count']}, incidents caught "
        f"{result['incidents_caught']}/{result['incidents_injected']}, claims beyond the truth "
        f"{len(result.get('truth_problems', []))}",
        flush=True,
    )


if __name__ == "__main__":
    main()
