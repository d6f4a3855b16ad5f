"""The SparkSession of the pipeline: one builder for the CLI, spark-submit and tests.

The Kafka data source (spark-sql-kafka-0-10 and its dependencies) comes from ``deploy/spark/lib``,
resolved once from Maven Central by ``deploy/spark/pom.xml`` (:func:`ensure_kafka_jars`) and handed to
Spark with ``spark.jars``: Spark itself never downloads anything. Under spark-submit the master, memory
and jars given on its command line win over these defaults.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from pipeline.errors import PipelineError

SPARK_HOME_DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "spark"
KAFKA_JAR_GLOB = "spark-sql-kafka-0-10_*.jar"

DEFAULTS: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    # Spark >= 3.4 fetches offsets through the AdminClient, which never lists internal topics: with it,
    # a read of __consumer_offsets silently returns nothing. The consumer-based fetcher does list them.
    "spark.sql.streaming.kafka.useDeprecatedOffsetFetching": "true",
    # The archive's date=/hour= directory names stay strings (zero-padded, so they compare as text).
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "20000",
    # Parquet's standard timestamp (INT64 microseconds, UTC) rather than Spark's legacy INT96 default:
    # what other readers expect, and the commits table is written 15% faster (bench/pipeline.py).
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.ui.showConsoleProgress": "false",  # pipeline.progress reports instead
}
# Input splits per core when a read is small enough to choose (files are read in at most 128 MB splits):
# several, so the cores finish together. Spark's default, one per core, left the 146 MB bench archive in
# three splits on two cores, one core idle for the last third of each scan.
SPLITS_PER_CORE = 4


def ensure_kafka_jars(lib: Path | None = None, *, resolve: bool = True) -> list[Path]:
    """The jars of the Kafka data source in ``lib`` (default ``deploy/spark/lib``), resolving them with
    ``mvn`` first when none is there (and ``resolve``); PipelineError if that is impossible."""
    lib = lib or SPARK_HOME_DEPLOY / "lib"
    if not any(lib.glob(KAFKA_JAR_GLOB)) and resolve:
        pom = lib.parent / "pom.xml"
        if not pom.is_file():
            raise PipelineError(f"no {KAFKA_JAR_GLOB} in {lib} and no {pom} to resolve it from")
        cmd = ["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PipelineError(f"cannot resolve the Spark Kafka jars with mvn: {exc}") from exc
        if done.returncode != 0:
            raise PipelineError(f"mvn dependency:copy-dependencies failed: {done.stdout[-2000:]}")
    jars = sorted(lib.glob("*.jar"))
    if not any(j.match(KAFKA_JAR_GLOB) for j in jars):
        raise PipelineError(f"no {KAFKA_JAR_GLOB} in {lib}")
    return jars


def build_session(
    *,
    master: str | None = None,
    app_name: str = "offsetguard-pipeline",
    shuffle_partitions: int | None = None,
    ui: bool = False,
    kafka_jars: list[Path] | None = None,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A session with the pipeline's defaults; ``master`` None leaves it to spark-submit (or local[*])."""
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = dict(DEFAULTS)
    settings["spark.ui.enabled"] = "true" if ui else "false"
    # Python workers run this interpreter (and so this offsetguard install) unless told otherwise;
    # PySpark reads the variable when the context starts, the conf is for executors elsewhere.
    python = os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings.setdefault("spark.pyspark.python", python)
    if shuffle_partitions is not None:
        settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    if kafka_jars:
        settings["spark.jars"] = ",".join(str(j) for j in kafka_jars)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if spark.conf.get("spark.sql.files.minPartitionNum", None) is None:
        cores = spark.sparkContext.defaultParallelism
        spark.conf.set("spark.sql.files.minPartitionNum", str(SPLITS_PER_CORE * cores))
    return spark
