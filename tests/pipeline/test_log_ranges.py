"""Committed offsets outside the log, from range samples: one finding per hold of a committed offset."""

from __future__ import annotations

from typing import Any

from pipeline.analysis import offset_records
from pipeline.log_ranges import outside_log
from pipeline.schema import HISTORY_DDL
from tests.pipeline.history import RANGES_DDL

# (source_offset, offset, commit time ms) of g/t[0]: 100 committed, re-committed unchanged (a paused
# member, auto-commit), then moved on to 200
COMMITS = [(1, 100, 1_000), (2, 100, 3_000), (3, 200, 9_000)]
# (at ms, log_start, log_end): retention passes 100 at 2.5 s and goes on while the offset is held
RANGES = [(2_000, 90, 300), (2_500, 101, 300), (4_000, 105, 310), (10_000, 150, 320)]


def _outside(spark: Any) -> list[Any]:
    rows = [
        {"cluster": "c1", "source_partition": 4, "source_offset": so, "timestamp": at, "kind": "commit",
         "record_type": 1, "group": "g", "topic": "t", "partition": 0, "offset": offset,
         "commit_timestamp": at}
        for so, offset, at in COMMITS
    ]  # fmt: skip
    history = spark.createDataFrame(rows, HISTORY_DDL)
    ranges = spark.createDataFrame([("c1", "t", 0, *r) for r in RANGES], RANGES_DDL)
    return outside_log(offset_records(history), ranges).collect()


def test_outside_log_recommitted_offset_is_one_hold_first_sample_magnitude(spark: Any) -> None:
    [found] = _outside(spark)
    assert (found.kind, found.old_offset, found.new_offset) == ("committed_below_log_start", None, 100)
    assert (found.at, found.magnitude, found.messages_lost) == (2_500, 1, 1)
