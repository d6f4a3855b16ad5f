"""The ``history`` job: source -> history -> commits, anomalies, blast_radius (Parquet) + report.

:func:`run_history` is the whole job over a session it is given; :func:`main` is the spark-submit entry
(``deploy/spark/history.py`` calls it), and ``offsetguard pipeline history`` builds the same
:class:`HistoryOptions` from its own arguments and settings.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pyspark import Accumulator
from pyspark.sql import DataFrame, SparkSession

from pipeline import sources
from pipeline.analysis import commits_table, find_anomalies, offset_records, rewind_and_loss_rows
from pipeline.arrow_decode import decode_history
from pipeline.blast import blast_radius
from pipeline.errors import PipelineError
from pipeline.options import HistoryOptions, add_arguments, options_from
from pipeline.progress import Progress
from pipeline.records import decode_records
from pipeline.report import write_report

TABLES = ("commits", "anomalies", "blast_radius")
log = logging.getLogger(__name__)


def load_history(
    spark: SparkSession, options: HistoryOptions, undecodable: Accumulator[int] | None = None
) -> tuple[DataFrame, DataFrame | None]:
    """The history frame of the chosen source, and the raw frame when there is one (records that do not
    decode are counted in ``undecodable`` as the history is computed)."""
    window = {"since": options.since, "until": options.until}
    if options.source == "archive":
        if options.archive is None:
            raise PipelineError("--source archive needs --archive DIR (or archive.directory in settings)")
        return sources.read_archive(spark, options.archive, **window), None
    if options.source == "snapshots":
        if options.snapshots is None:
            raise PipelineError("--source snapshots needs --snapshots DIR")
        raw = sources.read_snapshots(spark, options.snapshots, **window)
    else:
        if not options.bootstrap_servers:
            raise PipelineError("--source kafka needs --bootstrap host:port or --cluster NAME")
        raw = sources.read_kafka(
            spark, options.bootstrap_servers, cluster=options.cluster, options=options.kafka_options, **window
        )
    return decode_history(raw, undecodable), raw


def run_history(
    spark: SparkSession, options: HistoryOptions, progress: Progress | None = None
) -> dict[str, Any]:
    """Run the job; returns the facts it wrote into report.json (and counts per table)."""
    progress = progress or Progress(None, quiet=True)
    t0 = time.monotonic()
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    progress.phase(f"reading {options.source}")
    undecodable = spark.sparkContext.accumulator(0)
    history, raw = load_history(spark, options, undecodable)
    if raw is not None:
        # Decode once: the tables below read the decoded history, not Kafka or the snapshots again.
        if options.records:
            progress.phase("decoding every record type (records)")
            decode_records(raw).write.mode("overwrite").parquet(str(out / "records"))
        progress.phase("decoding (history)")
        history.write.mode("overwrite").parquet(str(out / "history"))
        history = spark.read.parquet(str(out / "history"))
        if undecodable.value:
            log.warning("%d records of %s did not decode: left out", undecodable.value, options.source)
    progress.phase("writing commits")
    commits_table(history).write.mode("overwrite").parquet(str(out / "commits"))
    commits = spark.read.parquet(str(out / "commits"))
    ranges = sources.read_ranges(spark, options.ranges) if options.ranges else None
    progress.phase("finding anomalies")
    groups = history.where("kind not in ('commit', 'offset_tombstone')")
    # Without log ranges only rewinds and tombstones are looked for: the narrow window serves them.
    offsets = offset_records(history) if ranges is not None else rewind_and_loss_rows(history)
    found = find_anomalies(groups, offsets, ranges, options.analysis)
    found.write.mode("overwrite").parquet(str(out / "anomalies"))
    anomalies = spark.read.parquet(str(out / "anomalies"))
    progress.phase("blast radius")
    blast_radius(anomalies, options.analysis.incident_gap_seconds).write.mode("overwrite").parquet(
        str(out / "blast_radius")
    )
    blast = spark.read.parquet(str(out / "blast_radius"))
    facts: dict[str, Any] = {
        "source": options.source,
        "since": _iso(options.since),
        "until": _iso(options.until),
        "commits": commits.count(),
        "anomalies": anomalies.count(),
        "incidents": blast.select("incident_id").distinct().count(),
    }
    if raw is not None:
        facts["undecodable_records"] = undecodable.value
    if options.report:
        progress.phase("report")
        facts["wall_seconds"] = round(time.monotonic() - t0, 1)
        write_report(out, blast, commits, anomalies, top=options.top, facts=facts)
    facts["wall_seconds"] = round(time.monotonic() - t0, 1)
    return facts


def _iso(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


def main(argv: Sequence[str] | None = None) -> int:
    """spark-submit entry: the session comes from spark-submit (master, jars, memory)."""
    from pipeline.session import build_session

    parser = argparse.ArgumentParser(prog="history", description="offsetguard offset-commit history job")
    add_arguments(parser)
    args = parser.parse_args(argv)
    options = options_from(args)
    spark = build_session()
    progress = Progress(spark.sparkContext, quiet=args.quiet)
    try:
        facts = run_history(spark, options, progress)
    finally:
        progress.close()
        spark.stop()
    print(facts, file=sys.stderr)
    return 0
