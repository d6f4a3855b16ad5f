"""A literal :class:`collectors.raw_reader.RawRecordReader` and builders of raw records.

Record bytes come from the tests' own encoder (``tests/collectors/codec/encode.py``), independent of the
decoder under test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from collectors.errors import KafkaError
from collectors.raw_reader import PartitionRange, RawFetch, RawRecord
from collectors.snapshots import SnapshotInfo
from tests.collectors.codec import encode as enc

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms


@dataclass
class FakeReader:
    """Serves ``records`` (in offset order) ``per_fetch`` at a time; ``fail`` raises on that fetch number.

    ``on_fetch`` runs before every fetch (tests look at the snapshot directory from there).
    """

    records: Sequence[RawRecord]
    partitions: int = 50
    log_start: int | None = None
    log_end: int | None = None
    per_fetch: int = 3
    fail: dict[int, KafkaError] = field(default_factory=dict)
    on_fetch: Callable[[], None] | None = None
    stall: bool = False
    skip_to: dict[int, int] = field(default_factory=dict)  # fetch at key: nothing, next offset = value
    fetches: list[tuple[int, int]] = field(default_factory=list)
    closed: bool = False

    def partition_count(self) -> int:
        return self.partitions

    def partition_range(self, partition: int) -> PartitionRange:
        start = (
            self.log_start if self.log_start is not None else (self.records[0].offset if self.records else 0)
        )
        end = (
            self.log_end if self.log_end is not None else (self.records[-1].offset + 1 if self.records else 0)
        )
        return PartitionRange(start, end)

    def fetch(self, partition: int, offset: int, max_bytes: int) -> RawFetch:
        self.fetches.append((partition, offset))
        if self.on_fetch is not None:
            self.on_fetch()
        error = self.fail.get(len(self.fetches))
        if error is not None:
            raise error
        if self.stall:
            return RawFetch((), offset)
        if offset in self.skip_to:
            return RawFetch((), self.skip_to[offset])
        later = (dataclasses.replace(r, partition=partition) for r in self.records if r.offset >= offset)
        batch = tuple(later)[: self.per_fetch]
        next_offset = batch[-1].offset + 1 if batch else offset
        return RawFetch(batch, next_offset)

    def close(self) -> None:
        self.closed = True


class ListIndex:
    """A :class:`collectors.snapshots.SnapshotIndex` in a dict."""

    def __init__(self) -> None:
        self.rows: dict[str, SnapshotInfo] = {}

    def add_snapshot(self, info: SnapshotInfo) -> None:
        self.rows[info.id] = info

    def delete_snapshot(self, snapshot_id: str) -> bool:
        return self.rows.pop(snapshot_id, None) is not None


def commit(
    offset: int,
    group: str,
    topic: str,
    partition: int,
    committed: int,
    *,
    epoch: int = 5,
    metadata: str = "",
    version: int = 3,
    producer_id: int = -1,
    transactional: bool = False,
) -> RawRecord:
    """An OffsetCommit record at ``offset`` of ``__consumer_offsets``."""
    value = enc.offset_value(version, committed, metadata, T0 + offset, leader_epoch=epoch)
    key = enc.offset_key(group, topic, partition)
    return RawRecord(0, offset, T0 + offset, key, value, producer_id=producer_id, transactional=transactional)


def offset_tombstone(offset: int, group: str, topic: str, partition: int) -> RawRecord:
    """An OffsetCommit tombstone (OffsetDelete, DeleteGroups, expiry)."""
    return RawRecord(0, offset, T0 + offset, enc.offset_key(group, topic, partition), None)


def group_metadata(offset: int, group: str, generation: int = 1) -> RawRecord:
    """A classic GroupMetadata record (type 2, v3, no members)."""
    value = enc.group_value(3, enc.Group(generation=generation))
    return RawRecord(0, offset, T0 + offset, enc.group_key(2, group), value)


def group_tombstone(offset: int, group: str) -> RawRecord:
    """A GroupMetadata tombstone (type 2, null value): the classic group was deleted."""
    return RawRecord(0, offset, T0 + offset, enc.group_key(2, group), None)


def unknown(offset: int) -> RawRecord:
    """A record of a type the codec does not know (type 99)."""
    return RawRecord(0, offset, T0 + offset, enc.i16(99) + b"xx", enc.i16(0) + b"yy")


def corrupt(offset: int) -> RawRecord:
    """An OffsetCommit key cut short: undecodable."""
    return RawRecord(0, offset, T0 + offset, enc.i16(1) + enc.i16(40) + b"abc", enc.i16(3))


def marker(offset: int, producer_id: int, *, commit: bool) -> RawRecord:
    """A transaction marker (control record) of ``producer_id``."""
    key = enc.i16(0) + enc.i16(1 if commit else 0)
    return RawRecord(
        0, offset, T0 + offset, key, enc.i16(0) + enc.i32(0), producer_id=producer_id,
        producer_epoch=0, transactional=True, control=True,
    )  # fmt: skip
