"""Literal stand-ins for the tail's seam: an in-memory ``__consumer_offsets``, a store and a sink.

:class:`FakeLog` behaves like the real consumer where the tail depends on it: records come back in
offset order per partition (``chunk`` at a time), offsets may jump (compaction), a partition's end may
lie past its last record (control records, aborted transactions) and only the position says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from collectors.errors import KafkaError
from collectors.tail import OffsetsTail
from collectors.tail_model import TailEvent
from tests.collectors.codec.encode import i16, offset_key, offset_value


class Rec(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


def commit(offset: int, group: str, topic: str, partition: int, committed: int, ts: int = 1_000) -> Rec:
    """A v3 OffsetCommit record at ``offset`` of the fake log."""
    return Rec(offset, ts, offset_key(group, topic, partition), offset_value(3, committed, "", ts))


def tombstone(offset: int, group: str, topic: str, partition: int) -> Rec:
    return Rec(offset, 2_000, offset_key(group, topic, partition), None)


def corrupt(offset: int) -> Rec:
    """A type-1 key cut short: the codec raises DecodeError."""
    return Rec(offset, 3_000, i16(1) + b"\x00\x05ab", b"\x00\x03")


def unknown(offset: int) -> Rec:
    return Rec(offset, 4_000, i16(99) + b"\x00\x01g", b"\x00\x00")


@dataclass
class FakeLog:
    """A :class:`collectors.tail_model.TailConsumer` over literal per-partition records."""

    logs: dict[int, list[Rec]]
    chunk: int = 2  # records per partition per fetch
    ends: dict[int, int] = field(default_factory=dict)  # defaults to last record + 1
    start_errors: list[KafkaError] = field(default_factory=list)  # raised by the next start() calls
    fetch_errors: list[KafkaError] = field(default_factory=list)  # raised by the next fetch() calls
    missing_topic_calls: int = 0  # partition_count() answers None this many times first
    pos: dict[int, int] = field(default_factory=dict)
    assigned: list[int] = field(default_factory=list)
    starts: int = 0
    stops: int = 0
    seeks: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for p, recs in self.logs.items():
            self.ends.setdefault(p, recs[-1].offset + 1 if recs else 0)

    def append(self, partition: int, rec: Rec) -> None:
        self.logs[partition].append(rec)
        self.ends[partition] = max(self.ends[partition], rec.offset + 1)

    async def start(self) -> None:
        self.starts += 1
        if self.start_errors:
            raise self.start_errors.pop(0)

    async def partition_count(self) -> int | None:
        if self.missing_topic_calls:
            self.missing_topic_calls -= 1
            return None
        return len(self.logs)

    def assign(self, partitions: Sequence[int]) -> None:
        self.assigned = list(partitions)

    def seek(self, partition: int, offset: int) -> None:
        self.pos[partition] = self.seeks[partition] = offset

    async def seek_to_beginning(self, partitions: Sequence[int]) -> None:
        for p in partitions:
            recs = self.logs[p]
            self.pos[p] = recs[0].offset if recs else self.ends[p]

    async def seek_to_end(self, partitions: Sequence[int]) -> None:
        for p in partitions:
            self.pos[p] = self.ends[p]

    async def end_offsets(self, partitions: Sequence[int]) -> dict[int, int]:
        return {p: self.ends[p] for p in partitions}

    async def fetch(self, timeout_ms: int, max_records: int) -> Mapping[int, Sequence[Rec]]:
        await asyncio.sleep(0)
        if self.fetch_errors:
            raise self.fetch_errors.pop(0)
        out: dict[int, Sequence[Rec]] = {}
        for p in self.assigned:
            recs = [r for r in self.logs[p] if r.offset >= self.pos[p]][: min(self.chunk, max_records)]
            if recs:
                out[p] = recs
                self.pos[p] = recs[-1].offset + 1
            elif self.pos[p] < self.ends[p]:
                self.pos[p] = self.ends[p]  # only control records left: position moves, nothing returned
        if not out:
            await asyncio.sleep(0.001)
        return out

    async def positions(self, partitions: Sequence[int]) -> dict[int, int]:
        return {p: self.pos[p] for p in partitions if p in self.pos}

    async def stop(self) -> None:
        self.stops += 1


class Saved(NamedTuple):
    partition: int
    next_offset: int


@dataclass
class FakeStore:
    """A :class:`collectors.tail_model.PositionStore` in a dict."""

    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    writes: int = 0

    def tail_positions(self, cluster: str) -> list[Saved]:
        return [Saved(p, n) for (c, p), n in sorted(self.positions.items()) if c == cluster]

    def set_tail_position(self, cluster: str, partition: int, next_offset: int, updated_at: float) -> None:
        self.positions[(cluster, partition)] = next_offset
        self.writes += 1


@dataclass
class RecordingSink:
    """Keeps every batch; ``check`` runs on each batch before it is accepted (and may raise)."""

    batches: list[list[TailEvent]] = field(default_factory=list)
    check: Callable[[Sequence[TailEvent]], Awaitable[None]] | None = None

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        if self.check is not None:
            await self.check(events)
        self.batches.append(list(events))

    @property
    def events(self) -> list[TailEvent]:
        return [e for batch in self.batches for e in batch]

    def offsets(self, partition: int) -> list[int]:
        return [e.offset for e in self.events if e.partition == partition]


async def until(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``cond`` on the running loop until true, else fail the test."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.002)


async def run_until_caught_up(tail: OffsetsTail) -> None:
    """Start ``tail``, wait for caught_up, stop it (final checkpoint included)."""
    tail.start()
    try:
        await until(lambda: tail.caught_up)
    finally:
        await tail.stop()
