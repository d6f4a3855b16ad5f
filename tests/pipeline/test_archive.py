"""ArchiveSink: what it keeps, rolling into whole Parquet files, crash recovery and retention (no Spark)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from collectors.codec import ConsumerGroupMetadata, GroupTombstone, UnknownRecord
from collectors.tail_model import TailEvent
from pipeline.archive import SPOOL_DIR, ArchiveSink, archive_sink, event_row
from pipeline.errors import ArchiveError
from tests.pipeline.history import Config
from tests.pipeline.scenario import T0, commit, group_state, tail_batches


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _events(n: int, at: float = 0.0) -> list[TailEvent]:
    return [TailEvent("c", 0, i, int((T0 + at) * 1000), commit("g", "t", 0, i, at)) for i in range(n)]


def _parquet(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("cluster=*/date=*/hour=*/*.parquet"))


def test_event_row_record_kinds_archived_or_skipped() -> None:
    def row(record: object) -> dict[str, object] | None:
        return event_row(TailEvent("c", 3, 9, 1000, record))  # type: ignore[arg-type]

    assert row(commit("g", "t", 1, 42, 0))["offset"] == 42  # type: ignore[index]
    assert row(group_state("g", 2))["group_state"] == "Stable"  # type: ignore[index]
    assert row(group_state("g", 0))["group_state"] == "Empty"  # type: ignore[index]
    assert row(ConsumerGroupMetadata("g", 0, 7, 0))["generation"] == 7  # type: ignore[index]
    assert row(GroupTombstone(2, "g"))["kind"] == "group_tombstone"  # type: ignore[index]
    assert row(GroupTombstone(5, "g", member_id="m")) is None  # a member left: not the group's state
    assert row(UnknownRecord(99, 0, b"k", b"v")) is None


def test_archive_sink_close_publishes_one_file_per_cluster_hour(tmp_path: Path) -> None:
    sink = ArchiveSink(Config(tmp_path))
    asyncio.run(sink.on_events(_events(5, at=0) + _events(3, at=3600)))
    assert _parquet(tmp_path) == []  # still spooled: nothing half-written is visible

    sink.close()

    files = _parquet(tmp_path)
    assert [f.parent.name for f in files] == ["hour=22", "hour=23"]
    assert [pq.read_table(f).num_rows for f in files] == [5, 3]
    assert not list((tmp_path / SPOOL_DIR).rglob("*.arrows"))


def test_archive_sink_max_rows_rolls_file_during_append(tmp_path: Path) -> None:
    sink = ArchiveSink(Config(tmp_path, max_rows_per_file=4))

    sink.append(_events(5))

    assert [pq.read_table(f).num_rows for f in _parquet(tmp_path)] == [5]
    assert sink.files_written == 1


def test_archive_sink_roll_seconds_elapsed_rolls_on_next_append(tmp_path: Path) -> None:
    clock = Clock(T0)
    sink = ArchiveSink(Config(tmp_path, roll_seconds=60), clock=clock)
    sink.append(_events(2))
    clock.now += 61

    sink.append(_events(1))

    assert [pq.read_table(f).num_rows for f in _parquet(tmp_path)] == [3]


def test_archive_sink_restart_after_crash_publishes_spool(tmp_path: Path) -> None:
    crashed = ArchiveSink(Config(tmp_path))
    crashed.append(_events(4))
    spool = next((tmp_path / SPOOL_DIR).rglob("*.arrows"))
    with open(spool, "ab") as f:
        f.write(b"\x07torn")  # a batch cut short by the crash

    ArchiveSink(Config(tmp_path))  # the next start

    assert [pq.read_table(f).num_rows for f in _parquet(tmp_path)] == [4]
    assert not spool.exists()


def test_archive_sink_retention_deletes_old_hours_only(tmp_path: Path) -> None:
    clock = Clock(T0 + 10 * 3600)
    sink = ArchiveSink(Config(tmp_path, retention_hours=5), clock=clock)
    sink.append(_events(1, at=0))  # 10 hours old
    sink.append(_events(1, at=9 * 3600))  # 1 hour old

    sink.close()

    assert [f.parent.name for f in _parquet(tmp_path)] == ["hour=07"]


def test_archive_sink_redelivered_batches_archive_every_delivery(tmp_path: Path) -> None:
    sink = ArchiveSink(Config(tmp_path))
    asyncio.run(_deliver(sink))
    sink.close()

    rows = sum(pq.read_table(f).num_rows for f in _parquet(tmp_path))
    assert rows == sum(1 for b in tail_batches() for e in b if event_row(e) is not None)


async def _deliver(sink: ArchiveSink) -> None:
    for batch in tail_batches():
        await sink.on_events(batch)


def test_archive_sink_then_sink_receives_every_batch(tmp_path: Path) -> None:
    seen: list[int] = []

    class Next:
        async def on_events(self, events: list[TailEvent]) -> None:
            seen.append(len(events))

    sink = archive_sink(Config(tmp_path), Next())
    asyncio.run(sink.on_events(_events(3)))

    assert seen == [3]
    assert isinstance(sink, ArchiveSink)


def test_archive_sink_disabled_returns_next_sink(tmp_path: Path) -> None:
    class Next:
        async def on_events(self, events: list[TailEvent]) -> None: ...

    nxt = Next()
    assert archive_sink(Config(tmp_path, enabled=False), nxt) is nxt


def test_archive_sink_unwritable_directory_raises_archive_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ArchiveError) as caught:
        ArchiveSink(Config(blocker / "archive"))

    assert caught.value.path == str(blocker / "archive")
