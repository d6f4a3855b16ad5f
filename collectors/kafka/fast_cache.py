"""What one seam remembers between cycles so that unchanged requests and answers are not redone.

* ListOffsets request bodies per (leader, timestamp), kept while the leader's partition set, the version
  and the timeout stay the same; a leadership change changes the set and so re-encodes.
* Metadata: each topic's bytes with its decoded (immutable) :class:`TopicInfo`.
* OffsetFetch: per coordinator, each error-free group's bytes with its decoded offsets.
* ListOffsets answers per (leader, timestamp): the last error-free body with its decoded offsets (the
  EARLIEST answer, log starts, is the same bytes until retention deletes a segment).
* ListOffsets ranges per leader: the last complete pair of answers with the ranges merged from them, to
  merge the next pair by what changed.

Each entry is replaced, not grown, by the next answer of the same kind, so memory stays about one cycle's
answers. Values are immutable or copied out, and entries are swapped whole, so concurrent seam calls can
at worst lose an update (a cache miss next time), never see half of one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from collectors.kafka.fast_metadata import TopicCache
from collectors.kafka.fast_offsets import GroupCache
from collectors.model import TopicPartition
from collectors.seam import OffsetRange

Listed = Mapping[tuple[str, int], tuple[int, int]]  # (topic, partition) -> (offset, leader epoch)
_Body = tuple[tuple[TopicPartition, ...], int, int, bytes]  # partitions, timeout_ms, version, body
# the partitions asked, the log starts and ends answered for exactly them, and the ranges merged from those
Ranges = tuple[tuple[TopicPartition, ...], Listed, Listed, Mapping[TopicPartition, OffsetRange]]


class WireCache:
    """Encoded requests and decoded answers of the previous cycle (see the module docstring)."""

    def __init__(self) -> None:
        self._bodies: dict[tuple[int, int], _Body] = {}
        self.topics: TopicCache = {}
        self._groups: dict[int, GroupCache] = {}
        self._answers: dict[tuple[int, int], tuple[int, bytes, Listed]] = {}
        self._ranges: dict[int, Ranges] = {}

    def list_offsets_body(
        self,
        leader: int,
        timestamp: int,
        partitions: tuple[TopicPartition, ...],
        timeout_ms: int,
        version: int,
        encode: Callable[[], bytes],
    ) -> bytes:
        """The cached body for this leader and timestamp if made for the same request, else ``encode()``."""
        got = self._bodies.get((leader, timestamp))
        if got is not None and got[1] == timeout_ms and got[2] == version and got[0] == partitions:
            return got[3]
        body = encode()
        self._bodies[leader, timestamp] = (partitions, timeout_ms, version, body)
        return body

    def listed(self, leader: int, timestamp: int, version: int, body: bytes) -> Listed | None:
        """The offsets decoded from the last answer of ``leader`` for ``timestamp`` if it was ``body``."""
        got = self._answers.get((leader, timestamp))
        if got is not None and got[0] == version and got[1] == body:
            return got[2]
        return None

    def keep_listed(self, leader: int, timestamp: int, version: int, body: bytes, listed: Listed) -> None:
        """Remember an error-free answer and what it decoded to (callers never change ``listed``)."""
        self._answers[leader, timestamp] = (version, body, listed)

    def ranges(self, leader: int) -> Ranges | None:
        """The last complete answers of ``leader`` and the ranges merged from them."""
        return self._ranges.get(leader)

    def keep_ranges(self, leader: int, ranges: Ranges) -> None:
        """Remember ``leader``'s complete answers and their ranges (callers never change them)."""
        self._ranges[leader] = ranges

    def groups(self, coordinator: int) -> GroupCache:
        """The groups last decoded from ``coordinator``'s answers."""
        return self._groups.get(coordinator, {})

    def keep_groups(self, coordinator: int, groups: GroupCache, whole: bool) -> None:
        """Remember ``groups``: replacing all of the coordinator's if ``whole`` (the answer to its batch
        of every group it coordinates), else adding them (a per-group retry must not evict the batch)."""
        self._groups[coordinator] = groups if whole else {**self.groups(coordinator), **groups}
