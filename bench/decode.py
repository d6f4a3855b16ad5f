"""bench/decode: how fast offsetguard reads ``__consumer_offsets`` — codec alone, the live tail end to end,
and Kafka's own console consumer with ``OffsetsMessageFormatter`` over the same records.

Starts a fresh 1-node sandbox, writes >= ``--records`` offset commits (OffsetCommit requests carrying
``--partitions`` partitions each, from several threads), then measures in one run:

* codec: :func:`collectors.codec.decode` in-process over the raw records (fetched once beforehand);
* tail: :class:`collectors.tail.OffsetsTail` from the log start until caught up (fetch + decode + sink);
* client: the tail's aiokafka consumer alone over the same records (fetch + record parsing, no decode);
* kafka: ``ConsoleConsumer --formatter OffsetsMessageFormatter`` over the same records (JVM start included).

    .venv/bin/python -m bench.decode [--records 1000000] [--partitions 1000] [--threads 4]

Prints the figures and writes bench/results/decode.json. Target: tail >= 150,000 records/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from kafka import KafkaAdminClient
from kafka import TopicPartition as KTopicPartition
from kafka.admin import NewTopic
from kafka.errors import CoordinatorNotAvailableError, NotCoordinatorError
from kafka.structs import OffsetAndMetadata

from collectors.codec import decode
from collectors.kafka.tail import AiokafkaTailConsumer, consumer_kwargs
from collectors.tail import OffsetsTail
from collectors.tail_progress import tune_gc
from collectors.tail_sinks import RecentEvents
from sandbox.cluster import SandboxCluster, start_sandbox

RESULTS = Path(__file__).resolve().parent / "results"
TOPIC = "__consumer_offsets"
FORMATTER = "org.apache.kafka.tools.consumer.OffsetsMessageFormatter"


def populate(cluster: SandboxCluster, records: int, partitions: int, threads: int) -> dict[str, Any]:
    """Commit ``partitions`` offsets per request for ceil(records / partitions) groups."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=120_000)
    admin.create_topics([NewTopic("bench-decode", partitions, 1)], timeout_ms=120_000)
    while True:
        described = admin.describe_topics(["bench-decode"])[0]["partitions"]
        if sum(p["leader_id"] >= 0 for p in described) >= partitions:
            break
        time.sleep(0.2)
    tps = [KTopicPartition("bench-decode", p) for p in range(partitions)]
    groups = -(-records // partitions)

    def commit(g: int) -> None:
        offsets = {tp: OffsetAndMetadata(g * 1000 + tp.partition, "", -1) for tp in tps}
        for _ in range(100):
            try:
                admin.alter_group_offsets(f"bench-decode-{g:05d}", offsets)
                return
            except (CoordinatorNotAvailableError, NotCoordinatorError):  # topic created lazily
                time.sleep(0.5)
        raise RuntimeError(f"group {g}: coordinator never available")

    commit(0)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(commit, range(1, groups)))
    wall = time.perf_counter() - t0
    admin.close()
    written = groups * partitions
    print(f"wrote {written:,} commits in {wall:.1f} s ({written / wall:,.0f}/s)", flush=True)
    return {"commits": written, "groups": groups, "partitions_per_request": partitions, "wall_s": wall}


async def read_all(
    cluster: SandboxCluster, keep: bool
) -> tuple[list[tuple[bytes, bytes | None]], dict[str, Any]]:
    """Every (key, value) of ``__consumer_offsets`` read once with the tail's consumer settings and batch
    size (the records kept only if ``keep``), and what the reading alone cost: aiokafka's fetches and its
    C record parsing, a ``ConsumerRecord`` each, no decode. The floor under any tail built on this client."""
    kwargs = consumer_kwargs(cluster.cluster_settings("bench"))
    consumer = AIOKafkaConsumer(**kwargs)
    await consumer.start()
    try:
        md = await consumer._client.fetch_all_metadata()
        tps = [TopicPartition(TOPIC, p) for p in sorted(md.partitions_for_topic(TOPIC))]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        await consumer.seek_to_beginning(*tps)
        out: list[tuple[bytes, bytes | None]] = []
        count = 0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            batch = await consumer.getmany(timeout_ms=1000, max_records=10_000)
            for records in batch.values():
                count += len(records)
                if keep:
                    out.extend((r.key, r.value) for r in records)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        return out, {
            "records": count,
            "wall_s": wall,
            "cpu_s": cpu,
            "records_per_cpu_s": count / cpu if cpu else None,
            "load_average": os.getloadavg()[0],
        }
    finally:
        await consumer.stop()


def measure_codec(records: list[tuple[bytes, bytes | None]], rounds: int = 3) -> dict[str, Any]:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for key, value in records:
            decode(key, value)
        best = min(best, time.perf_counter() - t0)
    return {"records": len(records), "best_wall_s": best, "records_per_s": len(records) / best}


async def measure_tail(cluster: SandboxCluster) -> dict[str, Any]:
    settings = cluster.cluster_settings("bench")
    sink = RecentEvents()
    tune_gc()  # as the service does when it runs tails
    tail = OffsetsTail("bench", AiokafkaTailConsumer(settings), sink, max_batch_records=10_000)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    tail.start()
    while not tail.caught_up:
        await asyncio.sleep(0.005)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    figures = tail.figures()
    await tail.stop()
    return {
        "records": figures.records_total,
        "load_average": os.getloadavg()[0],
        "events": figures.events_total,
        "decode_errors": figures.decode_errors,
        "unknown_records": figures.unknown_records,
        "wall_s": wall,
        "cpu_s": cpu,
        "records_per_s": figures.records_total / wall,
        "records_per_cpu_s": figures.records_total / cpu if cpu else None,
        "sink": sink.stats(),
    }


def measure_kafka(cluster: SandboxCluster, records: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = cluster.run_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--topic",
        TOPIC,
        "--from-beginning",
        "--formatter",
        FORMATTER,
        "--max-messages",
        str(records),
        "--consumer-property",
        "exclude.internal.topics=false",
        "--timeout-ms",
        "30000",
        timeout=1800,
    )
    wall = time.perf_counter() - t0
    # The formatter writes one JSON object per record with no separator; the tool reports its own count.
    processed = re.search(r"Processed a total of (\d+) messages", proc.stderr)
    count = int(processed.group(1)) if processed else proc.stdout.count('{"key":')
    return {
        "records": count,
        "records_in_output": proc.stdout.count('{"key":'),
        "wall_s": wall,
        "records_per_s": count / wall,
        "exit_code": proc.returncode,
        "note": "wall time includes JVM start; read_uncommitted (the tool's default)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load_at_start = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="og-bench-decode-") as tmp:
        cluster = start_sandbox(Path(tmp) / "sandbox", brokers=1)
        try:
            written = populate(cluster, args.records, args.partitions, args.threads)
            # Best of three fresh tails from the log start: the 2 cores are shared with other work.
            runs = [asyncio.run(measure_tail(cluster)) for _ in range(args.rounds)]
            tail = {**max(runs, key=lambda r: r["records_per_s"]), "runs": runs}
            print(f"tail (fetch+decode+sink)  {tail['records_per_s']:>12,.0f} records/s (best)", flush=True)
            reads = [asyncio.run(read_all(cluster, keep=False))[1] for _ in range(args.rounds)]
            client = {**max(reads, key=lambda r: r["records_per_cpu_s"] or 0), "runs": reads}
            print(
                f"client alone (aiokafka)   {client['records_per_cpu_s']:>12,.0f} records per CPU s (best)",
                flush=True,
            )
            raw, _ = asyncio.run(read_all(cluster, keep=True))
            codec = measure_codec(raw)
            del raw
            print(f"codec in-process          {codec['records_per_s']:>12,.0f} records/s", flush=True)
            kafka = measure_kafka(cluster, tail["records"])
            print(f"kafka console consumer    {kafka['records_per_s']:>12,.0f} records/s", flush=True)
        finally:
            cluster.down()

    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_start": load_at_start,  # other work on the shared cores skews wall figures
            "load_average_at_end": os.getloadavg(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "written": written,
        "codec": codec,
        "tail": tail,
        "client": client,
        "kafka_console_consumer": kafka,
        "tail_vs_kafka": tail["records_per_s"] / kafka["records_per_s"] if kafka["records_per_s"] else None,
        "target_tail_records_per_s": 150_000,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "decode.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS / 'decode.json'}")


if __name__ == "__main__":
    main()
