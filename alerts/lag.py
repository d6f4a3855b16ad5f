"""Lag of every committed group-partition against its partition's log range. Pure: no I/O, no clock.

A negative lag is kept as it is, never clamped to zero: a committed offset beyond the log end is exactly
what offsetguard must show (truncation, a recreated topic). A partition whose log range is unknown this
cycle has ``lag=None``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from collectors.model import CommittedOffset, PartitionOffsets


@dataclass(frozen=True, slots=True)
class PartitionLag:
    group: str
    topic: str
    partition: int
    committed: int
    leader_epoch: int | None
    log_start: int | None
    log_end: int | None
    lag: int | None  # log_end - committed; negative when committed is beyond the log end

    @property
    def below_log_start(self) -> bool:
        return self.log_start is not None and self.committed < self.log_start

    @property
    def beyond_log_end(self) -> bool:
        return self.log_end is not None and self.committed > self.log_end


def partition_lags(
    committed: Iterable[CommittedOffset], offsets: Iterable[PartitionOffsets]
) -> tuple[PartitionLag, ...]:
    """One :class:`PartitionLag` per committed offset, sorted by group, topic, partition."""
    ranges = {(p.topic, p.partition): p for p in offsets}
    rows = []
    for c in committed:
        r = ranges.get((c.topic, c.partition))
        rows.append(
            PartitionLag(
                group=c.group,
                topic=c.topic,
                partition=c.partition,
                committed=c.offset,
                leader_epoch=c.leader_epoch,
                log_start=r.log_start if r else None,
                log_end=r.log_end if r else None,
                lag=r.log_end - c.offset if r else None,
            )
        )
    rows.sort(key=attrgetter("group", "topic", "partition"))
    return tuple(rows)
