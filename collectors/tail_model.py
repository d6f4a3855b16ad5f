"""Shapes of the ``__consumer_offsets`` live tail: its events, its sink, its consumer seam and its figures.

The tail (:mod:`collectors.tail`) reads raw records through a :class:`TailConsumer` (the real one is
:class:`collectors.kafka.tail.AiokafkaTailConsumer`; unit tests hand in a literal fake), decodes them with
:mod:`collectors.codec` and hands :class:`TailEvent` batches to one :class:`TailSink`. Where it resumes
is kept in a :class:`PositionStore` (:class:`store.Store` fits it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from collectors.codec import Record
from collectors.fast_init import fast_init

TOPIC = "__consumer_offsets"


@fast_init
@dataclass(frozen=True, slots=True)
class TailEvent:
    """One decoded ``__consumer_offsets`` record, located by source partition and offset."""

    cluster: str
    partition: int  # partition of __consumer_offsets the record was read from
    offset: int  # its offset there
    timestamp: int  # record timestamp, ms since the epoch (the coordinator's append time)
    record: Record  # OffsetCommit, OffsetCommitTombstone, GroupMetadata, GroupTombstone, ...


class TailSink(Protocol):
    """Where tail events go (the detection side). Events of one partition arrive in offset order."""

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        """Take a batch; when this returns, the tail may record the batch as delivered."""
        ...


class RawRecord(Protocol):
    """What the tail reads of one fetched record (aiokafka's ``ConsumerRecord`` has these)."""

    @property
    def offset(self) -> int: ...

    @property
    def timestamp(self) -> int: ...

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...


class TailConsumer(Protocol):
    """Async Kafka I/O of the tail, over ``__consumer_offsets`` only; partitions are plain ints.

    Every method raises only :class:`collectors.errors.KafkaError` subclasses.
    """

    async def start(self) -> None:
        """Connect (bootstrap); fails when no broker answers."""
        ...

    async def partition_count(self) -> int | None:
        """Partitions of ``__consumer_offsets`` from fresh metadata; None while the topic does not exist."""
        ...

    def assign(self, partitions: Sequence[int]) -> None:
        """Read exactly these partitions (no consumer group)."""
        ...

    def seek(self, partition: int, offset: int) -> None:
        """Next fetch of ``partition`` starts at ``offset``."""
        ...

    async def seek_to_beginning(self, partitions: Sequence[int]) -> None: ...

    async def seek_to_end(self, partitions: Sequence[int]) -> None: ...

    async def end_offsets(self, partitions: Sequence[int]) -> dict[int, int]:
        """Offsets the tail can read up to (the last stable offset under read_committed)."""
        ...

    async def fetch(self, timeout_ms: int, max_records: int) -> Mapping[int, Sequence[RawRecord]]:
        """Records fetched since the last call, by partition, in offset order; {} after ``timeout_ms``."""
        ...

    async def positions(self, partitions: Sequence[int]) -> dict[int, int]:
        """Next offset to be returned for each partition whose position is known right now (never blocks
        for long). Past skipped control records and aborted transactions, unlike the last record + 1."""
        ...

    async def stop(self) -> None:
        """Close connections; the consumer is not used afterwards."""
        ...


class StoredPosition(Protocol):
    """A saved resume point (``store.TailPosition`` has these)."""

    @property
    def partition(self) -> int: ...

    @property
    def next_offset(self) -> int: ...


class PositionStore(Protocol):
    """Blocking storage of tail positions; the tail calls it from a worker thread."""

    def tail_positions(self, cluster: str) -> Sequence[StoredPosition]: ...

    def set_tail_position(
        self, cluster: str, partition: int, next_offset: int, updated_at: float
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class TailFigures:
    """A snapshot of the tail's own figures, for readiness and metrics."""

    cluster: str
    state: str  # starting, waiting_for_topic, running, backing_off, stopped
    caught_up: bool
    partitions: int
    records_total: int  # raw records read (events + unknown + decode errors + out of scope)
    events_total: int  # events handed to the sink
    records_per_second: float  # over the last few seconds
    lag: Mapping[int, int]  # per partition: last known end offset - delivered position
    unknown_records: int
    decode_errors: int
    fetch_errors: int
    last_error: str | None
    last_checkpoint_at: float | None
    out_of_scope_records: int = 0  # dropped before their value was decoded (collectors.scope)

    @property
    def lag_total(self) -> int:
        return sum(self.lag.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (partition keys as strings)."""
        return {
            "cluster": self.cluster,
            "state": self.state,
            "caught_up": self.caught_up,
            "partitions": self.partitions,
            "records_total": self.records_total,
            "events_total": self.events_total,
            "records_per_second": round(self.records_per_second, 1),
            "lag_total": self.lag_total,
            "lag": {str(p): n for p, n in sorted(self.lag.items())},
            "unknown_records": self.unknown_records,
            "out_of_scope_records": self.out_of_scope_records,
            "decode_errors": self.decode_errors,
            "fetch_errors": self.fetch_errors,
            "last_error": self.last_error,
            "last_checkpoint_at": self.last_checkpoint_at,
        }
