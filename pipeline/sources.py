"""Where the history comes from: the commit archive, snapshot files, or ``__consumer_offsets`` itself.

Each reader returns a frame the analysis takes: :func:`read_archive` the history frame directly (it is
decoded already), :func:`read_snapshots` and :func:`read_kafka` a raw frame for
:func:`pipeline.arrow_decode.decode_history`. Times (``since``/``until``) are epoch ms, inclusive/exclusive.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pipeline import schema
from pipeline.errors import PipelineError

OFFSETS_TOPIC = "__consumer_offsets"
SNAPSHOT_RECORDS = "records.jsonl.gz"
SNAPSHOT_DDL = (
    "`partition` int, `offset` bigint, `timestamp` bigint, `key` string, `value` string, "
    "`producer_id` bigint, `transactional` boolean, `control` boolean, `marker` string"
)


def _hour(ms: int) -> tuple[str, str]:
    at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return at.strftime("%Y-%m-%d"), at.strftime("%H")


def between(df: DataFrame, since: int | None, until: int | None, column: str = "timestamp") -> DataFrame:
    """Rows with ``since <= column < until`` (either bound may be None)."""
    if since is not None:
        df = df.where(F.col(column) >= since)
    if until is not None:
        df = df.where(F.col(column) < until)
    return df


def read_archive(
    spark: SparkSession, directory: Path | str, *, since: int | None = None, until: int | None = None
) -> DataFrame:
    """The history frame of the archive under ``directory`` (``cluster=/date=/hour=`` directories).

    ``since``/``until`` prune whole hour directories before any file is opened, then filter rows.
    """
    path = Path(directory)
    if not path.is_dir() or not any(path.glob("cluster=*")):
        raise PipelineError(f"no archive under {path} (expected cluster=*/date=*/hour=* directories)")
    df = spark.read.schema(schema.HISTORY_DDL + ", `date` string, `hour` string").parquet(str(path))
    hour = F.concat_ws(" ", "date", "hour")
    if since is not None:
        df = df.where(hour >= " ".join(_hour(since)))
    if until is not None:
        df = df.where(hour <= " ".join(_hour(until)))
    return between(df, since, until).select(*schema.HISTORY_COLUMNS)


def read_snapshots(
    spark: SparkSession, directory: Path | str, *, since: int | None = None, until: int | None = None
) -> DataFrame:
    """A raw frame of every snapshot under ``directory`` (``<id>/records.jsonl.gz`` + ``manifest.json``).

    Transaction markers are dropped, and so are records of aborted transactions (a transactional record
    whose producer's next marker in that partition is ABORT). Overlapping snapshots of one partition
    are de-duplicated by (cluster, partition, offset).
    """
    by_cluster: dict[str, list[str]] = {}
    for manifest in sorted(Path(directory).glob("*/manifest.json")):
        try:
            cluster = str(json.loads(manifest.read_text(encoding="utf-8"))["cluster"])
        except (OSError, ValueError, KeyError) as exc:
            raise PipelineError(f"unreadable snapshot manifest {manifest}: {exc}") from exc
        if (manifest.parent / SNAPSHOT_RECORDS).is_file():
            by_cluster.setdefault(cluster, []).append(str(manifest.parent / SNAPSHOT_RECORDS))
    if not by_cluster:
        raise PipelineError(f"no snapshots under {directory}")
    frames = [
        spark.read.schema(SNAPSHOT_DDL).json(paths).withColumn("cluster", F.lit(cluster))
        for cluster, paths in sorted(by_cluster.items())
    ]
    lines = frames[0]
    for frame in frames[1:]:
        lines = lines.unionByName(frame)
    lines = lines.dropDuplicates(["cluster", "partition", "offset"])
    w = Window.partitionBy("cluster", "partition", "producer_id").orderBy("offset")
    marker = F.first(F.when(F.col("control"), F.col("marker")), ignorenulls=True).over(
        w.rowsBetween(1, Window.unboundedFollowing)
    )
    lines = lines.select("*", marker.alias("_outcome"))
    kept = lines.where(~F.col("control") & ~(F.col("transactional") & (F.col("_outcome") == "ABORT")))
    raw = kept.select(
        "cluster",
        F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"),
        "timestamp",
        F.unbase64("key").alias("key"),
        F.unbase64("value").alias("value"),
    )
    return between(raw, since, until)


def read_kafka(
    spark: SparkSession,
    bootstrap_servers: str,
    *,
    cluster: str,
    options: Mapping[str, str] | None = None,
    since: int | None = None,
    until: int | None = None,
) -> DataFrame:
    """A raw frame of ``__consumer_offsets`` read by Spark's Kafka source (read_committed, log start to
    the end offsets at planning time). The session must be built with the Kafka jars and
    ``spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true`` (see :mod:`pipeline.session`)."""
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", OFFSETS_TOPIC)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        # Compaction and transaction markers leave gaps in the offsets; they are not data loss.
        .option("failOnDataLoss", "false")
        .option("kafka.isolation.level", "read_committed")
        .option("kafka.exclude.internal.topics", "false")
    )
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    raw = reader.load().select(
        F.lit(cluster).alias("cluster"),
        F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"),
        F.unix_millis("timestamp").alias("timestamp"),
        "key",
        "value",
    )
    return between(raw, since, until)


RANGES_COLUMNS = ("cluster", "topic", "partition", "at", "log_start", "log_end")
RANGES_DDL = (
    "`cluster` string, `topic` string, `partition` int, `at` bigint, `log_start` bigint, `log_end` bigint"
)


def read_ranges(spark: SparkSession, path: Path | str) -> DataFrame:
    """Log-range samples (``cluster, topic, partition, at`` ms, ``log_start, log_end``) from Parquet,
    or from JSON lines when the name ends in .json/.jsonl(.gz).

    The file is checked here, before the job uses it: PipelineError when it is missing, unreadable
    (a malformed JSON line, a value of the wrong type, not Parquet), or has a row without every field.
    """
    text = str(path)
    if not Path(text).exists():
        raise PipelineError(f"no log ranges at {text}")
    reader = spark.read.schema(RANGES_DDL)
    if text.endswith((".json", ".jsonl", ".jsonl.gz")):
        ranges = reader.option("mode", "FAILFAST").json(text)
    else:
        ranges = reader.parquet(text)
    try:
        incomplete = ranges.where(" or ".join(f"`{c}` is null" for c in RANGES_COLUMNS)).count()
    except (PySparkException, Py4JJavaError) as exc:
        raise PipelineError(f"unreadable log ranges {text}: {_cause(exc)}") from exc
    if incomplete:
        raise PipelineError(
            f"{incomplete} log-range rows of {text} lack a field (each needs {', '.join(RANGES_COLUMNS)})"
        )
    return ranges


def _cause(exc: Exception) -> str:
    """The first line of the JVM's message and of its root cause (a Py4JJavaError's own text is a Java
    stack trace)."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return _first_line(str(exc)) or type(exc).__name__
    lines = [_first_line(str(java.getMessage()))]
    root = java
    while root.getCause() is not None:
        root = root.getCause()
    if root is not java:
        lines.append(_first_line(str(root.getMessage())))
    return ": ".join(line for line in lines if line)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
