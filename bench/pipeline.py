"""bench/pipeline: records/s of the Spark history job on local[2], against the Python codec and Kafka's own
OffsetsMessageFormatter on the same raw records.

In one run:

* archive: a synthetic archive of ``--commits`` commits over ``--groups`` groups (:mod:`bench.gen_archive`,
  or an existing one with ``--archive``), then the whole job (commits, anomalies, blast radius, report);
* kafka: a fresh 1-node sandbox gets >= ``--kafka-records`` offset commits; then Spark reads
  ``__consumer_offsets`` and decodes it in Arrow batches (read + decode, decode of the records already
  read, then the whole job), the Python raw reader reads the same records, the Python codec decodes them
  in a loop, and the console consumer with ``OffsetsMessageFormatter`` prints them (JVM start included);
* Spark's own floors beside them, nothing of offsetguard in them: a Parquet copy of the archive's commit
  rows, the shuffle and sort a window per group-partition needs, the Kafka source reading the topic, and
  a ``mapInArrow`` round trip of the raw records.

    .venv/bin/python -m bench.pipeline [--commits 50000000] [--groups 5000] [--kafka-records 1000000]

Prints the figures and writes bench/results/pipeline.json. Target: >= 1,000,000 records/s for the
Spark decode + analysis on this 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from bench.gen_archive import generate
from collectors.codec import decode
from collectors.kafka.offsets_topic import read_offsets_topic
from pipeline import schema
from pipeline.arrow_decode import decode_history
from pipeline.job import run_history
from pipeline.options import HistoryOptions
from pipeline.progress import Progress
from pipeline.session import build_session, ensure_kafka_jars
from pipeline.sources import read_kafka
from sandbox.cluster import SandboxCluster, start_sandbox

COMMIT_COLUMNS = (
    *("cluster", "group", "topic", "partition", "offset", "leader_epoch", "commit_timestamp", "metadata"),
    *("expire_timestamp", "topic_id", "kind", "source_partition", "source_offset"),
)
RESULTS = Path(__file__).resolve().parent / "results"
TARGET = 1_000_000


def populate(cluster: SandboxCluster, records: int) -> dict[str, Any]:
    from bench.pipeline_kafka import commit_offsets

    return commit_offsets(cluster.bootstrap_servers, records)


def measure_kafka_formatter(cluster: SandboxCluster, records: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = cluster.run_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--bootstrap-server", cluster.bootstrap_servers,
        "--topic", "__consumer_offsets",
        "--from-beginning",
        "--formatter", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter",
        "--max-messages", str(records),
        "--consumer-property", "exclude.internal.topics=false",
        "--timeout-ms", "30000",
        timeout=1800,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    processed = re.search(r"Processed a total of (\d+) messages", proc.stderr)
    count = int(processed.group(1)) if processed else proc.stdout.count('{"key":')
    return {
        "records": count,
        "wall_s": wall,
        "records_per_s": count / wall if wall else None,
        "exit_code": proc.returncode,
        "note": "console consumer, JVM start included, output to a pipe",
    }


def kafka_part(spark: Any, work: Path, records: int) -> dict[str, Any]:
    cluster = start_sandbox(work / "sandbox", brokers=1)
    try:
        written = populate(cluster, records)
        t0 = time.perf_counter()
        snap = read_offsets_topic(cluster.bootstrap_servers, timeout_s=900)
        raw_read = time.perf_counter() - t0
        raw = [(r.key, r.value) for r in snap.records]
        n = len(raw)
        del snap
        codec = best_of_two(partial(decode_all, raw), n)
        del raw
        print(f"python codec loop          {codec['records_per_s']:>12,.0f} records/s", flush=True)
        figures = kafka_spark(spark, cluster, work, n)
        out, servers = work / "kafka-out", cluster.bootstrap_servers
        options = HistoryOptions(source="kafka", out=out, bootstrap_servers=servers, cluster="bench")
        spark_job = whole_job(spark, options, n)
        print(f"spark kafka whole job      {spark_job['records_per_s']:>12,.0f} records/s", flush=True)
        formatter = measure_kafka_formatter(cluster, n)
        print(f"kafka OffsetsMessageFormatter {formatter['records_per_s']:>9,.0f} records/s", flush=True)
    finally:
        cluster.down()
    return {
        "written": written,
        "python_raw_reader": {"records": n, "wall_s": raw_read, "records_per_s": n / raw_read},
        "python_codec": codec,
        **figures,
        "spark_job": spark_job,
        "kafka_offsets_formatter": formatter,
    }


def decode_all(raw: list[tuple[bytes, bytes | None]]) -> None:
    """The Python codec over ``raw`` key/value pairs, one call each."""
    for key, value in raw:
        decode(key, value)


def kafka_spark(spark: Any, cluster: SandboxCluster, work: Path, n: int) -> dict[str, Any]:
    """Spark reading and decoding the ``n`` records of ``__consumer_offsets``, decoding them already read,
    and the floors of both: the Kafka source alone, an Arrow round trip with no decoding."""

    def noop(frame: Any) -> dict[str, Any]:
        return best_of_two(lambda: frame.write.format("noop").mode("overwrite").save(), n)

    raw_kafka = read_kafka(spark, cluster.bootstrap_servers, cluster="bench")
    spark_decode = noop(decode_history(raw_kafka))
    print(f"spark kafka read + decode  {spark_decode['records_per_s']:>12,.0f} records/s", flush=True)
    # Spark's Kafka source alone, nothing decoded: the ceiling of any job reading the topic.
    read_only = noop(raw_kafka)
    print(f"spark floor: kafka read    {read_only['records_per_s']:>12,.0f} records/s", flush=True)
    # The same records already read (a Parquet copy of the raw frame): decode alone, as the codec loop.
    raw_kafka.write.parquet(str(work / "raw"))
    raw_frame = spark.read.parquet(str(work / "raw"))
    decode_only = noop(decode_history(raw_frame))
    print(f"spark decode (already read) {decode_only['records_per_s']:>11,.0f} records/s", flush=True)
    # The same records through mapInArrow and back unchanged: what handing batches to Python costs
    # before any decoding, the ceiling of an Arrow-batched decoder.
    round_trip = noop(raw_frame.mapInArrow(lambda batches: batches, raw_frame.schema))
    print(f"spark floor: arrow trip    {round_trip['records_per_s']:>12,.0f} records/s", flush=True)
    return {
        "spark_decode": spark_decode,
        "spark_kafka_read_floor": read_only,
        "spark_decode_already_read": decode_only,
        "spark_arrow_round_trip_floor": round_trip,
    }


def best_of_two(run: Callable[[], object], records: int) -> dict[str, Any]:
    """The faster of two runs of ``run`` over ``records`` records."""
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return {"records": records, "best_wall_s": best, "records_per_s": records / best}


def whole_job(spark: Any, options: HistoryOptions, records: int) -> dict[str, Any]:
    """One run of the history job, with its facts and the seconds of each phase."""
    progress = Progress(None)
    t0 = time.perf_counter()
    facts = run_history(spark, options, progress)
    wall = time.perf_counter() - t0
    progress.close()
    return {
        "records": records,
        "wall_s": wall,
        "records_per_s": records / wall,
        "facts": facts,
        "phases_s": phase_seconds(progress.lines),
    }


def archive_part(spark: Any, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    archive = args.archive
    generated = None
    if archive is None:
        archive = work / "archive"
        generated = generate(
            archive,
            commits=args.commits,
            groups=args.groups,
            partitions=4,
            hours=24,
            rewind_every=100_000,
            tombstone_every=1_000_000,
        )
        print(f"generated {generated['commits']:,} commits in {generated['wall_s']:.0f} s", flush=True)
    rows = spark.read.parquet(str(archive)).count()
    job = whole_job(spark, HistoryOptions(source="archive", out=work / "archive-out", archive=archive), rows)
    print(f"spark archive whole job    {job['records_per_s']:>12,.0f} records/s ({rows:,} rows)", flush=True)
    # The commits table is the archive's commit rows again (a 50M-row Parquet copy): the analysis
    # proper is every other phase.
    analysis_s = job["wall_s"] - job["phases_s"].get("writing commits", 0.0)
    analysis = {"records": rows, "wall_s": analysis_s, "records_per_s": rows / analysis_s}
    rate = analysis["records_per_s"]
    print(f"spark archive analysis     {rate:>12,.0f} records/s (all but the commits copy)", flush=True)
    return {
        "generated": generated,
        "spark_job": job,
        "analysis_without_commits_copy": analysis,
        "floors": floors(spark, archive, work, rows),
    }


def floors(spark: Any, archive: Path, work: Path, rows: int) -> dict[str, Any]:
    """What Spark itself costs on this machine for the two things the job cannot skip, timed on the same
    archive with nothing of offsetguard in them: a Parquet copy of the archive's commit rows (the columns
    of the ``commits`` table, as stored) and the shuffle and sort that a window over each group-partition's
    commits in log order needs (a 64-bit key hash and one long position: the narrowest rows the job could
    sort). Their sum bounds the job's records/s from above."""

    def timed(name: str, write: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        write()
        wall = time.perf_counter() - t0
        print(f"spark floor: {name:<14}{rows / wall:>12,.0f} records/s ({wall:.1f} s)", flush=True)
        return {"records": rows, "wall_s": wall, "records_per_s": rows / wall}

    history = spark.read.parquet(str(archive))
    records = history.where(F.col("kind").isin(schema.COMMIT, schema.OFFSET_TOMBSTONE))
    stored = records.select(*COMMIT_COLUMNS)
    copy = timed("parquet copy", lambda: stored.write.parquet(str(work / "floor-copy")))
    shutil.rmtree(work / "floor-copy", ignore_errors=True)
    narrow = records.select(
        F.xxhash64("cluster", "group", "topic", "partition").alias("_k"),
        (F.col("source_partition").cast("bigint") * 2**47 + F.col("source_offset")).alias("_pos"),
    )
    ordered = narrow.repartition("_k").sortWithinPartitions("_k", "_pos")
    sort = timed("window sort", lambda: ordered.write.format("noop").mode("overwrite").save())
    bound = rows / (copy["wall_s"] + sort["wall_s"])
    print(f"spark floor: both          {bound:>12,.0f} records/s (the job's ceiling)", flush=True)
    return {"parquet_copy": copy, "window_shuffle_sort": sort, "ceiling_records_per_s": bound}


def phase_seconds(lines: list[str]) -> dict[str, float]:
    """Seconds of each phase from :class:`Progress` lines ``[   1.4s] writing commits ...``."""
    marks = []
    for line in lines:
        match = re.match(r"\[\s*([0-9.]+)s\] (.*?)( \.\.\.)?$", line)
        if match:
            marks.append((float(match.group(1)), match.group(2)))
    return {name: round(marks[i + 1][0] - at, 1) for i, (at, name) in enumerate(marks[:-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=50_000_000)
    parser.add_argument("--groups", type=int, default=5000)
    parser.add_argument("--archive", type=Path, help="use this archive instead of generating one")
    parser.add_argument("--kafka-records", type=int, default=1_000_000)
    parser.add_argument("--skip-kafka", action="store_true")
    parser.add_argument("--skip-archive", action="store_true")
    parser.add_argument("--work", type=Path, help="working directory (default: a temporary one)")
    args = parser.parse_args()

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = build_session(
        master="local[2]",
        app_name="offsetguard-bench",
        shuffle_partitions=8,
        kafka_jars=ensure_kafka_jars(),
        conf={"spark.driver.memory": "6g"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    work = args.work or Path(tempfile.mkdtemp(prefix="og-bench-pipeline-"))
    result: dict[str, Any] = {}
    try:
        if not args.skip_archive:
            result["archive"] = archive_part(spark, work, args)
        if not args.skip_kafka:
            result["kafka"] = kafka_part(spark, work, args.kafka_records)
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["machine"] = {
        "cpus": os.cpu_count(),
        "load_average_at_end": os.getloadavg(),  # other engineers' work on the shared cores skews wall time
        "python": platform.python_version(),
        "platform": platform.platform(),
        "spark_master": "local[2]",
    }
    result["target_records_per_s"] = TARGET
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "pipeline.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"written to {RESULTS / 'pipeline.json'}")


if __name__ == "__main__":
    main()
