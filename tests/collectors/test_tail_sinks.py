"""collectors.tail_sinks.RecentEvents: counts by record kind, the newest timestamp, the last events."""

from __future__ import annotations

from collectors.codec import OffsetCommit, OffsetCommitTombstone
from collectors.codec.records import GroupMetadata, GroupTombstone
from collectors.tail_model import TailEvent
from collectors.tail_sinks import RecentEvents


def commit(offset: int) -> OffsetCommit:
    return OffsetCommit(1, "g", "t", 0, 3, offset, None, "", 1000, None, None)


def event(offset: int, timestamp: int, record: object) -> TailEvent:
    return TailEvent("c", 0, offset, timestamp, record)  # type: ignore[arg-type]


async def test_counts_each_kind_keeps_the_newest_timestamp_and_the_last_events() -> None:
    sink = RecentEvents(keep=3)
    group = GroupMetadata("g", 3, "consumer", 1, "range", None, None, ())
    await sink.on_events(
        [
            event(0, 5000, commit(1)),
            event(1, 9000, OffsetCommitTombstone(1, "g", "t", 0)),
            event(2, 7000, group),
            event(3, 6000, commit(2)),
            event(4, 4000, GroupTombstone(2, "g")),
        ]
    )
    await sink.on_events([])  # nothing: not a batch
    await sink.on_events([event(5, 8000, commit(3))])  # older than the newest seen: kept at 9000
    assert sink.stats() == {
        "batches": 2,
        "events": 6,
        "by_kind": {"GroupMetadata": 1, "GroupTombstone": 1, "OffsetCommit": 3, "OffsetCommitTombstone": 1},
        "last_record_timestamp_ms": 9000,
    }
    assert [e.offset for e in sink.recent] == [3, 4, 5]


async def test_a_batch_of_commits_only_reports_no_other_kind() -> None:
    sink = RecentEvents()
    await sink.on_events([event(0, 1, commit(1)), event(1, 2, commit(2))])
    assert sink.stats()["by_kind"] == {"OffsetCommit": 2}
    assert sink.stats()["last_record_timestamp_ms"] == 2
