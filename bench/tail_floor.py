"""bench/tail_floor: what reading every commit costs while consumers commit, against kminion's whole process.

offsetguard's tail reads each record of ``__consumer_offsets`` (the committed offsets, tombstones and
group records as they happen); kminion asks Kafka for the committed offsets once a scrape and never reads
a commit. At ``--churn 1`` every group-partition commits every 5 s (2,500 commits a second at 5k
partitions), and what the tail pays per commit is a floor under the whole service's CPU at that rate:
no detection, store or poll can cost less than nothing. On a populated sandbox (bench/service's layout),
with bench/service's churn running, one after the other, each in a process of its own:

* ``read``: the tail's own aiokafka consumer settings over every partition of ``__consumer_offsets`` from
  its end, fetching again no sooner than ``--pacing`` s after a short batch (the service's tail waits
  ``tail.batch_interval_seconds``, 0.25 s by default), records counted, nothing decoded;
* ``decode``: the same, each record decoded by :func:`collectors.codec.decode`;
* ``tail``: :class:`collectors.tail.OffsetsTail` as the service runs it, with the committed offsets' view
  (:class:`collectors.tail_committed.TailCommitted`) and the recent events as sinks (detection's copy of
  the events, detection, the store and the polls left out);
* ``offsetguard serve`` (default settings, bench/service's run) and kminion (``--kminion``), each
  scraped every 15 s.

CPU is each process's own (user + system) over ``--seconds``, after a warm-up.

    .venv/bin/python -m bench.tail_floor --kminion /path/to/kminion [--size 5000] [--churn 1]
    ... --attach DIR     # a populated sandbox left running (bench/service --keep)

Prints the figures and writes bench/results/tail_floor.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.result_file import write_result
from bench.service import SETTLE_S, add_sandbox_arguments, ratios
from bench.service_run import kminion_run, offsetguard_run
from bench.service_traffic import COUNTS, Churn, expected_committed, populate_size
from collectors.codec import decode
from collectors.kafka.tail import AiokafkaTailConsumer, consumer_kwargs
from collectors.settings import ClusterSettings
from collectors.tail import OffsetsTail
from collectors.tail_committed import TailCommitted
from collectors.tail_model import TOPIC
from collectors.tail_progress import tune_gc
from collectors.tail_sinks import RecentEvents
from sandbox.cluster import SandboxCluster, start_sandbox
from service.detection.tail_sink import FanOutSink

MODES = ("read", "decode", "tail")
WARM_S = 10.0  # the probe reads this long before measuring: its start and the first fetches left out
FETCH_MAX_RECORDS = 10_000  # the service tail's max_batch_records
FETCH_TIMEOUT_MS = 500


async def _read(settings: ClusterSettings, seconds: float, pacing: float, decoding: bool) -> dict[str, Any]:
    """``read`` and ``decode``: the tail's consumer settings, paced as the service's tail paces fetches."""
    consumer = AIOKafkaConsumer(**consumer_kwargs(settings, "bench-tail-floor"))
    await consumer.start()
    try:
        md = await consumer._client.fetch_all_metadata()
        tps = [TopicPartition(TOPIC, p) for p in sorted(md.partitions_for_topic(TOPIC) or ())]
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        records = errors = 0
        start = time.monotonic() + WARM_S
        cpu0: float | None = None
        while True:
            now = time.monotonic()
            if cpu0 is None and now >= start:
                cpu0, records = time.process_time(), 0
            if cpu0 is not None and now - start >= seconds:
                break
            batch = await consumer.getmany(timeout_ms=FETCH_TIMEOUT_MS, max_records=FETCH_MAX_RECORDS)
            got = 0
            for rs in batch.values():
                got += len(rs)
                if decoding:
                    for r in rs:
                        try:
                            decode(r.key, r.value)
                        except Exception:  # the tail counts them too
                            errors += 1
            records += got
            if got < FETCH_MAX_RECORDS and pacing > 0:
                await asyncio.sleep(pacing)
        cpu = time.process_time() - cpu0
        return {
            "records": records,
            "seconds": time.monotonic() - start,
            "cpu_s": cpu,
            "decode_errors": errors,
        }
    finally:
        await consumer.stop()


async def _tail(settings: ClusterSettings, seconds: float, pacing: float) -> dict[str, Any]:
    """``tail``: the service's tail and the collectors' views of it, from the end of the log."""
    tune_gc()  # as the service does when it runs tails

    tail = OffsetsTail(
        settings.name,
        AiokafkaTailConsumer(settings, client_id="bench-tail-floor"),
        FanOutSink(TailCommitted(settings.name), RecentEvents()),
        start_from="latest",
        max_batch_records=FETCH_MAX_RECORDS,
        batch_interval_seconds=pacing,
    )
    tail.start()
    try:
        await asyncio.sleep(WARM_S)
        records0, cpu0, t0 = tail.figures().records_total, time.process_time(), time.monotonic()
        await asyncio.sleep(seconds)
        figures = tail.figures()
        return {
            "records": figures.records_total - records0,
            "seconds": time.monotonic() - t0,
            "cpu_s": time.process_time() - cpu0,
            "decode_errors": figures.decode_errors,
        }
    finally:
        await tail.stop()


def figures(mode: str, pacing: float, got: dict[str, Any]) -> dict[str, Any]:
    """One probe's figures: CPU s per minute, records per second and CPU microseconds per record."""
    seconds, cpu, records = got["seconds"], got["cpu_s"], got["records"]
    return {
        "mode": mode,
        "pacing_s": pacing,
        **got,
        "records_per_s": round(records / seconds) if seconds > 0 else None,
        "cpu_s_per_min": round(cpu * 60.0 / seconds, 2) if seconds > 0 else None,
        "cpu_us_per_record": round(cpu / records * 1e6, 2) if records else None,
    }


def probe(cluster: SandboxCluster, mode: str, seconds: float, pacing: float) -> dict[str, Any]:
    """One probe in a process of its own (its CPU is its own; the benchmark's churn runs in another)."""
    command = [sys.executable, "-m", "bench.tail_floor", "--probe", mode, "--attach", str(cluster.dir)]
    command += ["--seconds", str(seconds), "--pacing", str(pacing)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"probe {mode} failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run_probe(args: argparse.Namespace) -> None:
    settings = SandboxCluster.load(Path(args.attach)).cluster_settings("bench")
    pacing = float(args.pacing)
    if args.probe == "tail":
        got = asyncio.run(_tail(settings, args.seconds, pacing))
    else:
        got = asyncio.run(_read(settings, args.seconds, pacing, decoding=args.probe == "decode"))
    print(json.dumps(figures(args.probe, pacing, got)), flush=True)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-bench-tail-floor-"))
    if args.attach:
        cluster = SandboxCluster.load(Path(args.attach))
    else:
        cluster = start_sandbox(root / "sandbox", brokers=3, broker_heap="1g", timeout=300, daemon=args.keep)
        populate_size(cluster, args.size)
    out: dict[str, Any] = {"size": args.size}
    try:
        out["cluster"] = expected = expected_committed(cluster)
        print(f"cluster: {expected}", flush=True)
        churn = Churn(cluster, args.size, args.churn)
        churn.start()  # the service and kminion runs start it again once they answer, and stop it
        try:
            probes = []
            for pacing in args.pacings:
                for mode in MODES:
                    probes.append(got := probe(cluster, mode, args.seconds, pacing))
                    print(json.dumps(got), flush=True)
        finally:
            churn.stop()
        out["probes"], out["churn_of_probes"] = probes, _since({}, seen := churn.figures())
        # the whole service and kminion as bench/service runs them
        run_args = argparse.Namespace(
            steady=args.seconds, settle=SETTLE_S, scrape_interval=15.0, interval=None
        )
        shutil.rmtree(root / "store", ignore_errors=True)  # a cold start, also in a --dir used before
        service = offsetguard_run(cluster, root / "store", expected, run_args, profile_s=0, label="cold")
        out["offsetguard"] = service.run(churn)
        out["churn_of_offsetguard"] = _since(seen, seen := churn.figures())
        if args.kminion:
            peer = kminion_run(Path(args.kminion), cluster, root / "kminion", expected, run_args)
            out["kminion"] = peer.run(churn)
            out["churn_of_kminion"] = _since(seen, churn.figures())
            out["ratios_vs_kminion"] = {
                f"{p['mode']}@{p['pacing_s']}": _ratio(p["cpu_s_per_min"], out["kminion"]) for p in probes
            } | {"offsetguard": ratios(out["offsetguard"], out["kminion"])["cpu_s_per_min"]}
    finally:
        if not (args.keep or args.attach):
            cluster.down()
    return out


def _since(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """The churn's figures of one phase: its counters (which add up over its runs) less those before."""
    return {k: v - before.get(k, 0) if k in COUNTS else v for k, v in now.items()}


def _ratio(cpu: float | None, peer: dict[str, Any]) -> float | None:
    theirs = peer.get("cpu_s_per_min")
    return round(cpu / theirs, 2) if cpu is not None and theirs else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5000, help="partitions (bench/service's layout)")
    parser.add_argument("--churn", type=float, default=1.0, help="share of partitions moved every 5 s")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds measured per probe and process")
    parser.add_argument(
        "--pacing",
        default="0.25,1.0",
        help="seconds between a short fetch and the next, comma-separated (the service's default: 0.25)",
    )
    add_sandbox_arguments(parser)
    parser.add_argument("--probe", choices=MODES, help=argparse.SUPPRESS)  # one probe, in its process
    args = parser.parse_args()
    if args.probe:
        run_probe(args)
        return
    args.pacings = [float(p) for p in args.pacing.split(",")]
    t0 = time.time()
    out = measure(args)
    result = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(t0)),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_end": os.getloadavg(),
        },
        "seconds": args.seconds,
        **out,
    }
    print(f"written to {write_result('tail_floor.json', result)}", flush=True)


if __name__ == "__main__":
    main()
