"""Raw ``__consumer_offsets`` records with their isolation facts, behind a small :class:`RawRecordReader`.

Snapshots (:mod:`collectors.snapshots`) read one partition of ``__consumer_offsets`` record by record,
undecoded, with what the record batch says about transactions: the producer id and epoch, whether the
batch is transactional, and whether it is a control batch (a COMMIT or ABORT marker). Reading is
read_uncommitted, so records of aborted (and still open) transactions are kept as evidence; which ones
were aborted follows from the markers, which are kept too.

The real reader is :class:`collectors.kafka.raw_reader.KafkaRawReader`; unit tests hand in a fake that
returns literal :class:`RawRecord` values. Every method raises only
:class:`collectors.errors.KafkaError` subclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

TOPIC = "__consumer_offsets"
NO_PRODUCER = -1


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as stored in the log, plus the facts of the batch it came in."""

    partition: int
    offset: int
    timestamp: int  # ms since the epoch (the coordinator's append time)
    key: bytes | None
    value: bytes | None  # None: a tombstone
    producer_id: int = NO_PRODUCER
    producer_epoch: int = -1
    transactional: bool = False
    control: bool = False  # a transaction marker; ``key``/``value`` are the marker's own bytes

    @property
    def marker(self) -> str | None:
        """``"COMMIT"`` or ``"ABORT"`` for a control record, else None (type 0 is ABORT, 1 COMMIT)."""
        if not self.control or self.key is None or len(self.key) < 4:
            return None
        kind = int.from_bytes(self.key[2:4], "big", signed=True)
        return {0: "ABORT", 1: "COMMIT"}.get(kind, f"CONTROL_{kind}")


class RawFetch(NamedTuple):
    """What one fetch returned: records at or after the asked offset, and where the next fetch starts.

    ``next_offset`` is past every batch returned, control batches and compacted-away offsets included,
    so a caller makes progress even when ``records`` is empty.
    """

    records: tuple[RawRecord, ...]
    next_offset: int


class PartitionRange(NamedTuple):
    """Log start and high watermark of one ``__consumer_offsets`` partition."""

    log_start: int
    log_end: int


class RawRecordReader(Protocol):
    """Blocking reads of ``__consumer_offsets``; one reader serves one caller at a time."""

    def partition_count(self) -> int:
        """Partitions of ``__consumer_offsets`` in fresh metadata (KafkaError if the topic is absent)."""
        ...

    def partition_range(self, partition: int) -> PartitionRange:
        """Log start and high watermark (read_uncommitted end) of ``partition``, from its leader."""
        ...

    def fetch(self, partition: int, offset: int, max_bytes: int) -> RawFetch:
        """Records of ``partition`` from ``offset`` on (read_uncommitted), about ``max_bytes`` of them."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...
