"""The history job end to end on the scenario archive (local Spark), its incidents and its report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.testing import assertDataFrameEqual

from pipeline.blast import blast_radius
from pipeline.job import run_history
from pipeline.options import HistoryOptions, add_arguments, options_from, parse_time
from pipeline.progress import Progress
from tests.pipeline.history import write_archive
from tests.pipeline.scenario import T0

ANOMALY_DDL = (
    "cluster string, group string, topic string, partition int, kind string, at bigint, "
    "source_partition int, source_offset bigint, messages_replayed bigint, messages_skipped bigint, "
    "offsets_lost bigint, messages_lost bigint"
)


@pytest.fixture(scope="module")
def job(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[str]]:
    tmp = tmp_path_factory.mktemp("job")
    write_archive(tmp / "archive")
    progress = Progress(None)
    facts = run_history(
        spark, HistoryOptions(source="archive", out=tmp / "out", archive=tmp / "archive"), progress
    )
    return tmp / "out", facts, progress.lines


def test_run_history_archive_writes_tables_and_counts(
    spark: Any, job: tuple[Path, dict[str, Any], list[str]]
) -> None:
    out, facts, _ = job

    # two rewinds, a live tombstone, and g8's and g13's moves back after a truncation: without log
    # ranges they cannot be told from rewinds (skips need log ranges too)
    assert facts["anomalies"] == 5
    # (a KIP-848 group deleted right after its last commit is not one: DeleteGroups needs no members)
    assert facts["commits"] == spark.read.parquet(str(out / "commits")).count() == 33
    assert spark.read.parquet(str(out / "commits")).where("tombstone").count() == 5


def test_run_history_archive_report_names_worst_incident_with_timeline(
    job: tuple[Path, dict[str, Any], list[str]],
) -> None:
    out, _, lines = job
    report = json.loads((out / "report.json").read_text())

    worst = report["top_incidents"][0]
    assert (worst["group"], worst["messages_replayed"], worst["partitions"]) == ("g7", 50, 1)
    assert (out / worst["timeline"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "g7" in (out / "report.md").read_text()
    assert [line.split("] ")[1] for line in lines[:3]] == [
        "reading archive ...",
        "writing commits ...",
        "finding anomalies ...",
    ]


def test_blast_radius_anomalies_close_in_time_one_incident(spark: Any) -> None:
    ms = T0 * 1000
    rows = [
        ("c", "g", "t", 0, "offset_rewind", ms, 0, 1, 30, None, None, None),
        ("c", "g", "t", 0, "offset_rewind", ms + 60_000, 0, 2, 5, None, None, None),
        ("c", "g", "t", 1, "offsets_lost", ms + 120_000, 0, 3, None, None, 1, None),
        ("c", "g", "t", 0, "offset_skip", ms + 7_200_000, 0, 4, None, 90, None, 20),  # two hours later
    ]
    anomalies = spark.createDataFrame(rows, ANOMALY_DDL)

    got = blast_radius(anomalies, gap_seconds=900).drop("first_commit_time", "last_commit_time")

    first, later = "c/g/2023-11-14T22:13:20.000Z", "c/g/2023-11-15T00:13:20.000Z"
    want = [
        (first, "c", "g", "t", 0, 2, ["offset_rewind"], 35, 0, 0, 0),
        (first, "c", "g", "t", 1, 1, ["offsets_lost"], 0, 0, 1, 0),
        (later, "c", "g", "t", 0, 1, ["offset_skip"], 0, 90, 0, 20),
    ]
    assertDataFrameEqual(got, spark.createDataFrame(want, got.schema))


def test_options_from_cli_arguments_times_and_kafka_options() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            "--source",
            "kafka",
            "--out",
            "o",
            "--since",
            "2026-11-01",
            "--kafka-option",
            "security.protocol=SSL",
        ]
    )

    options = options_from(args, bootstrap_servers="b:9092")

    assert options.since == parse_time("2026-11-01T00:00:00Z") == 1_793_491_200_000
    assert options.kafka_options == {"kafka.security.protocol": "SSL"}
    assert options.bootstrap_servers == "b:9092"


def _snapshot(directory: Path, records: list[tuple[bytes, bytes | None]]) -> None:
    """A snapshot directory as the snapshot writer lays it out (manifest + records.jsonl.gz)."""
    import base64
    import gzip

    directory.mkdir(parents=True)
    (directory / "manifest.json").write_text(json.dumps({"cluster": "c"}))
    lines = [
        {
            "partition": 3,
            "offset": i,
            "timestamp": T0 * 1000 + i,
            "key": base64.b64encode(key).decode(),
            "value": None if value is None else base64.b64encode(value).decode(),
            "producer_id": -1,
            "transactional": False,
            "control": False,
            "marker": None,
        }
        for i, (key, value) in enumerate(records)
    ]
    with gzip.open(directory / "records.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)


def test_run_history_snapshots_undecodable_records_counted_and_reported(spark: Any, tmp_path: Path) -> None:
    from tests.collectors.codec import encode as e

    key = e.offset_key("g", "t", 0)
    good = e.offset_value(3, 10, "", T0 * 1000, leader_epoch=1)
    records = [(key, good), (key, good[:-3]), (key, e.offset_value(3, 12, "", T0 * 1000 + 1)), (key, None)]
    _snapshot(tmp_path / "snapshots" / "s-1", records)

    facts = run_history(
        spark, HistoryOptions(source="snapshots", out=tmp_path / "out", snapshots=tmp_path / "snapshots")
    )

    assert (facts["commits"], facts["undecodable_records"]) == (3, 1)  # two commits and a tombstone
    assert json.loads((tmp_path / "out" / "report.json").read_text())["undecodable_records"] == 1
    assert "- **undecodable_records**: 1" in (tmp_path / "out" / "report.md").read_text()
