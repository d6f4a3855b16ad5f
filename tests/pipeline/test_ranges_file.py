"""The log-range samples file: written from store rows, read back by the job's ``--ranges`` reader, and
exported from a service store by ``offsetguard pipeline history --ranges-from-store``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cli.pipeline import export_ranges
from collectors.errors import ConfigError
from collectors.model import OffsetsObservation, PartitionOffsets
from pipeline.errors import PipelineError
from pipeline.ranges_file import write_ranges
from pipeline.sources import read_ranges
from service.settings import load_settings
from store import Store

GOOD_LINE = b'{"cluster":"c","topic":"t","partition":0,"at":1,"log_start":0,"log_end":5}\n'
ROWS = [("c1", "t", 0, 1_000, 0, 100), ("c1", "t", 0, 2_000, 5, 120), ("c1", "é/x", 3, 1_500, 0, 7)]


def test_write_ranges_read_back_by_the_job_reader(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "r" / "ranges.parquet"
    assert write_ranges(ROWS, path) == 3
    got = read_ranges(spark, path).collect()
    assert sorted(tuple(r) for r in got) == sorted(ROWS)
    assert [p.name for p in path.parent.iterdir()] == ["ranges.parquet"]  # no temporary left


def test_write_ranges_no_rows_empty_file_with_schema(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "ranges.parquet"
    assert write_ranges([], path) == 0
    assert read_ranges(spark, path).count() == 0


def test_read_ranges_json_lines_read(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "ranges.jsonl"
    path.write_bytes(GOOD_LINE)
    assert [tuple(r) for r in read_ranges(spark, path).collect()] == [("c", "t", 0, 1, 0, 5)]


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("ranges.parquet", b"not parquet at all", "unreadable log ranges .*is not a Parquet file"),
        ("ranges.jsonl", GOOD_LINE + b"{oops\n", "unreadable log ranges .*Unexpected character"),
        ("ranges.jsonl", GOOD_LINE.replace(b'"partition":0', b'"partition":"x"'), "unreadable log ranges"),
        (
            "ranges.jsonl",
            b'{"cluster":"c","topic":"t","partition":0,"at":1}\n',
            "1 log-range rows .* lack a field",
        ),
    ],
)
def test_read_ranges_bad_file_clear_error_before_the_job(
    spark: Any, tmp_path: Path, name: str, content: bytes, error: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(PipelineError, match=error):
        read_ranges(spark, path)


def test_read_ranges_missing_file_clear_error(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match="no log ranges at"):
        read_ranges(spark, tmp_path / "nope.parquet")


def test_export_ranges_from_store_within_job_bounds(tmp_path: Path) -> None:
    settings = load_settings(store={"path": str(tmp_path / "og.db")})
    with Store.open(settings.store) as store:
        for at, end in ((100.0, 10), (200.0, 20), (300.0, 30)):
            store.record_offsets(OffsetsObservation("c1", at, (PartitionOffsets("t", 0, 0, end),)))

    path = export_ranges(settings, tmp_path / "out", since=150_000, until=250_000)

    assert path == tmp_path / "out" / "ranges.parquet"
    assert pq.read_table(path).to_pylist() == [
        {"cluster": "c1", "topic": "t", "partition": 0, "at": 200_000, "log_start": 0, "log_end": 20}
    ]


def test_export_ranges_without_a_store_is_a_config_error(tmp_path: Path) -> None:
    settings = load_settings(store={"path": str(tmp_path / "missing.db")})
    with pytest.raises(ConfigError, match="no store"):
        export_ranges(settings, tmp_path / "out", None, None)
    assert not (tmp_path / "missing.db").exists()
