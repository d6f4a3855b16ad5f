"""The windows over each group-partition's records: neighbours are the records before and after, never
a repeated delivery of the record itself; the narrow (numbers only) and full windows agree."""

from __future__ import annotations

from typing import Any

from pipeline.analysis import narrow_rows, narrow_window, offset_records
from pipeline.schema import HISTORY_DDL

# (source_offset, kind, offset, commit time) of one group-partition; source offset 2 delivered twice
RECORDS = [
    (1, "commit", 100, 1_000),
    (2, "commit", 40, 2_000),
    (2, "commit", 40, 2_000),
    (3, "commit", 120, 3_000),
]


def _history(spark: Any) -> Any:
    rows = [
        {"cluster": "c1", "source_partition": 4, "source_offset": so, "timestamp": at, "kind": kind,
         "record_type": 1, "group": "g", "topic": "t", "partition": 0, "offset": offset,
         "commit_timestamp": at}
        for so, kind, offset, at in RECORDS
    ]  # fmt: skip
    return spark.createDataFrame(rows, HISTORY_DDL)


def test_offset_records_repeated_delivery_dropped_before_neighbours(spark: Any) -> None:
    got = offset_records(_history(spark)).orderBy("source_offset").collect()

    assert [(r.source_offset, r.prev_offset, r.next_offset) for r in got] == [
        (1, None, 40),
        (2, 100, 120),  # its next is the record after, not its own second delivery
        (3, 40, None),
    ]
    assert [r.prev_moved_at for r in got] == [None, 1_000, 2_000]


def test_narrow_window_same_neighbours_as_full_window(spark: Any) -> None:
    history = _history(spark)
    full = offset_records(history).orderBy("source_offset").collect()
    narrow = narrow_window(narrow_rows(history)).orderBy("_pos").collect()

    assert [r._pos % 2**47 for r in narrow] == [1, 2, 3] and {r._pos >> 47 for r in narrow} == {4}
    keys = ("offset", "at", "prev_offset", "prev_at", "next_offset", "next_at")

    def values(rows: list[Any]) -> list[tuple[Any, ...]]:
        return [tuple(getattr(r, k) for k in keys) for r in rows]

    assert values(narrow) == values(full)
