"""bench/poll: wall and CPU time of one full collection cycle on a large sandbox.

Builds a 1-controller + 3-broker sandbox holding >= 20,000 partitions and >= 2,000 groups with >= 50,000
committed group-partitions, then times offsetguard's full cycle (metadata, log start/end of every
partition, every group described, every group's committed offsets, topic configs, broker metrics) and,
in the same run, Kafka's own ``kafka-consumer-groups --describe --all-groups`` from the sandbox jars.

    .venv/bin/python -m bench.poll [--topics 200] [--partitions 100] [--groups 2000] [--per-group 25]

Prints the figures and writes them to bench/results/poll.json. Target: <= 1 s wall per full cycle.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from collectors.kafka.seam import KafkaPythonSeam
from sandbox.cluster import SandboxCluster, start_sandbox
from service.scheduler import CollectorJob
from service.settings import Settings
from service.state import LatestObservations
from service.wiring import build_cluster_jobs

RESULTS = Path(__file__).resolve().parent / "results"


def populate(cluster: SandboxCluster, topics: int, partitions: int, groups: int, per_group: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=120_000)
    names = [f"bench-{i:04d}" for i in range(topics)]
    t0 = time.perf_counter()
    for i in range(0, topics, 20):
        admin.create_topics([NewTopic(n, partitions, 1) for n in names[i : i + 20]], timeout_ms=120_000)
    _wait_for_leaders(cluster, set(names), topics * partitions)
    print(f"created {topics * partitions} partitions in {time.perf_counter() - t0:.1f} s", flush=True)

    t0 = time.perf_counter()
    # librdkafka: kafka-python's producer walks every partition's batches at each send (20,000
    # partitions took 92 s, 100,000 were not done in 15 min)
    # Brokers that have just created 50,000 partitions answer slowly on two cores: a minute per produce
    # request was seen (librdkafka's default socket timeout, then every message in flight failed). Waited
    # for longer, and a partition whose messages still failed is produced to again (its log end may then
    # be one higher than planned: a timed-out request can have been written).
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 50,
            "acks": 1,
            "socket.timeout.ms": 300_000,
            "request.timeout.ms": 300_000,
            "message.timeout.ms": 600_000,
        }
    )
    wanted = [(name, p, 1 + p % 3) for name in names for p in range(partitions)]  # log ends of 1..3
    for _ in range(3):
        failed = _produce(producer, wanted)
        if not failed:
            break
        print(f"produce: {len(failed)} partitions failed ({failed[0][1]}), again", flush=True)
        wanted = [(t, p, n) for (t, p, n), _ in failed]
    else:
        raise RuntimeError(f"produce: {len(failed)} partitions failed three times ({failed[0][1]})")
    print(f"produced to every partition in {time.perf_counter() - t0:.1f} s", flush=True)

    t0 = time.perf_counter()
    all_tps = [TopicPartition(n, p) for n in names for p in range(partitions)]

    def commit(g: int) -> None:
        start = (g * per_group) % len(all_tps)
        tps = [all_tps[(start + k) % len(all_tps)] for k in range(per_group)]
        offsets = {tp: OffsetAndMetadata(1, "", -1) for tp in tps}
        admin.alter_group_offsets(f"bench-group-{g:05d}", offsets)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(commit, range(groups)))
    print(f"committed {groups * per_group} group-partitions in {time.perf_counter() - t0:.1f} s", flush=True)
    admin.close()


def _produce(
    producer: Producer, wanted: list[tuple[str, int, int]]
) -> list[tuple[tuple[str, int, int], object]]:
    """``n`` messages to each ``(topic, partition, n)`` of ``wanted``; those whose delivery failed, with
    an error."""
    failed: dict[tuple[str, int], object] = {}

    def delivered(err: object, msg: Any) -> None:
        if err is not None:
            failed[(msg.topic(), msg.partition())] = err

    for name, p, n in wanted:
        for _ in range(n):
            while True:
                try:
                    producer.produce(name, b"x", partition=p, on_delivery=delivered)
                    break
                except BufferError:  # its queue is full: let deliveries drain it
                    producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(900)
    if left:
        raise RuntimeError(f"produce: {left} messages neither delivered nor failed in 15 minutes")
    return [((t, p, n), failed[(t, p)]) for t, p, n in wanted if (t, p) in failed]


def _wait_for_leaders(cluster: SandboxCluster, names: set[str], want: int, timeout: float = 300) -> None:
    seam = KafkaPythonSeam(cluster.cluster_settings("bench"))
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            topics = seam.metadata().topics
            led = sum(1 for t in topics if t.name in names for p in t.partitions if p.leader is not None)
            if led >= want:
                return
            time.sleep(1)
    finally:
        seam.close()
    raise RuntimeError(f"partitions without leaders after {timeout} s")


async def one_cycle(jobs: list[CollectorJob]) -> dict[str, Any]:
    """One full cycle as the scheduler runs it: fresh metadata, then every other collector concurrently."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    ok = await jobs[0].run_once()
    results = await asyncio.gather(*(job.run_once() for job in jobs[1:]))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    failed = [j.job_id for j, r in zip(jobs, [ok, *results], strict=True) if not r]
    if failed:
        raise RuntimeError(f"collectors failed during the benchmark: {failed}")
    per_collector = {j.collector.name: round(j.status.last_duration or 0.0, 4) for j in jobs}
    return {"wall_s": wall, "cpu_s": cpu, "per_collector_s": per_collector}


async def profile_cycle(jobs: list[CollectorJob]) -> None:
    """cProfile one full cycle; the top functions by own time go to bench/results/poll-profile.txt."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    await one_cycle(jobs)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(40)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "poll-profile.txt").write_text(out.getvalue())


async def measure_offsetguard(cluster: SandboxCluster, cycles: int, profile: bool = False) -> dict[str, Any]:
    settings = Settings(clusters=[cluster.cluster_settings("bench")])
    latest = LatestObservations()
    jobs, close = build_cluster_jobs(settings.clusters[0], settings, latest, store=None)
    try:
        await one_cycle(jobs)  # warm-up: connections, metadata caches
        runs = [await one_cycle(jobs) for _ in range(cycles)]
        if profile:
            await profile_cycle(jobs)
        from collectors.model import CommittedObservation, GroupsObservation, OffsetsObservation

        committed = latest.get("bench", CommittedObservation)
        groups = latest.get("bench", GroupsObservation)
        offsets = latest.get("bench", OffsetsObservation)
        observed = {
            "partitions": len(offsets.partitions) if offsets else 0,
            "groups": len(groups.groups) if groups else 0,
            "committed_group_partitions": len(committed.offsets) if committed else 0,
        }
    finally:
        await asyncio.to_thread(close)
    walls = [r["wall_s"] for r in runs]
    return {
        "observed": observed,
        "cycles": runs,
        "wall_s_median": statistics.median(walls),
        "wall_s_max": max(walls),
        "cpu_s_median": statistics.median(r["cpu_s"] for r in runs),
    }


def measure_kafka_tool(cluster: SandboxCluster) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = cluster.run_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--describe",
        "--all-groups",
        timeout=1800,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = sum(1 for line in proc.stdout.splitlines() if line.startswith("bench-group-"))
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "rows": rows,
        "exit_code": proc.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--per-group", type=int, default=25)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--dir", type=Path, help="sandbox directory (default: a temporary one)")
    parser.add_argument("--profile", action="store_true", help="also cProfile one cycle")
    parser.add_argument("--keep", action="store_true", help="leave the populated sandbox running in --dir")
    parser.add_argument("--attach", action="store_true", help="reuse the populated sandbox running in --dir")
    parser.add_argument("--skip-kafka-tool", action="store_true", help="do not time kafka-consumer-groups")
    args = parser.parse_args()

    directory = args.dir or Path(tempfile.mkdtemp(prefix="og-bench-poll-"))
    t0 = time.perf_counter()
    if args.attach:
        cluster = SandboxCluster.load(directory)
    else:
        cluster = start_sandbox(directory, brokers=3, broker_heap="1g", timeout=300, daemon=args.keep)
    print(f"sandbox up in {time.perf_counter() - t0:.1f} s at {cluster.bootstrap_servers}", flush=True)
    try:
        if not args.attach:
            populate(cluster, args.topics, args.partitions, args.groups, args.per_group)
        ours = asyncio.run(measure_offsetguard(cluster, args.cycles, args.profile))
        print(f"offsetguard full cycle: {json.dumps(ours)}", flush=True)
        if args.skip_kafka_tool:
            return
        theirs = measure_kafka_tool(cluster)
        print(f"kafka-consumer-groups --describe --all-groups: {json.dumps(theirs)}", flush=True)
    finally:
        if not (args.keep or args.attach):
            cluster.down()
    result = {
        "benchmark": "poll",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args) | {"dir": str(directory), "brokers": 3},
        "offsetguard": ours,
        "kafka_consumer_groups": theirs,
        "target_wall_s": 1.0,
        "speedup_vs_kafka_tool": theirs["wall_s"] / ours["wall_s_median"],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "poll.json").write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"RESULT full cycle wall {ours['wall_s_median']:.3f} s (max {ours['wall_s_max']:.3f}), "
        f"cpu {ours['cpu_s_median']:.3f} s over {ours['observed']}; "
        f"kafka-consumer-groups {theirs['wall_s']:.1f} s wall, {theirs['cpu_s']:.1f} s cpu"
    )


if __name__ == "__main__":
    main()
