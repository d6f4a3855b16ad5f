"""A bounded raw read of ``__consumer_offsets``: every record from log start to the current end.

:func:`read_offsets_topic` assigns every partition explicitly (no group, nothing committed), snapshots
the end offsets, and reads until each partition's position reaches its snapshot. With
``read_committed`` the end is the last stable offset and aborted transactional commits are skipped;
``read_uncommitted`` returns them too. Control records (transaction markers) are never returned, so
offsets can have gaps. For one-shot reads (tests, tools); the live tail is :mod:`collectors.tail`.
kafka-python errors are translated into :mod:`collectors.errors` here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import kafka.errors as kerr
from kafka import KafkaConsumer, TopicPartition

from collectors.errors import KafkaError, KafkaTimeoutError, KafkaUnavailableError
from collectors.kafka.errors import translate

TOPIC = "__consumer_offsets"
IsolationLevel = Literal["read_committed", "read_uncommitted"]


@dataclass(frozen=True, slots=True)
class RawOffsetsRecord:
    """One record of ``__consumer_offsets`` as stored: ``value`` None is a tombstone."""

    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class OffsetsTopicSnapshot:
    """Records by (partition, offset) and, per partition, the end offset the read stopped at."""

    records: list[RawOffsetsRecord]
    end_offsets: dict[int, int]

    @property
    def partition_count(self) -> int:
        return len(self.end_offsets)


def read_offsets_topic(
    bootstrap_servers: str | list[str],
    *,
    isolation_level: IsolationLevel = "read_committed",
    timeout_s: float = 60.0,
    cluster: str = "",
) -> OffsetsTopicSnapshot:
    """Every record of every partition up to the end offsets seen at the start, by (partition, offset).

    Raises KafkaTimeoutError if the end is not reached within ``timeout_s``, KafkaUnavailableError if
    the topic does not exist, and other :class:`KafkaError` subclasses for what the client raised.
    """
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap_servers,
            group_id=None,
            enable_auto_commit=False,
            isolation_level=isolation_level,
            client_id="offsetguard-offsets-reader",
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
    except kerr.KafkaError as exc:
        raise translate(exc, cluster=cluster, topic=TOPIC, what="connecting") from exc
    try:
        return _read_all(consumer, time.monotonic() + timeout_s, cluster)
    except KafkaError:
        raise
    except kerr.KafkaError as exc:
        raise translate(exc, cluster=cluster, topic=TOPIC, what=f"reading {TOPIC}") from exc
    finally:
        consumer.close(autocommit=False)


def _read_all(consumer: KafkaConsumer, deadline: float, cluster: str) -> OffsetsTopicSnapshot:
    partitions = consumer.partitions_for_topic(TOPIC)
    if not partitions:
        raise KafkaUnavailableError(f"{TOPIC} does not exist (yet)", cluster=cluster, topic=TOPIC)
    tps = [TopicPartition(TOPIC, p) for p in sorted(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends: dict[TopicPartition, int] = consumer.end_offsets(tps)
    pending = {tp for tp in tps if consumer.position(tp) < ends[tp]}
    out: list[RawOffsetsRecord] = []
    while pending:
        if time.monotonic() > deadline:
            behind = sorted(tp.partition for tp in pending)
            raise KafkaTimeoutError(f"end of {TOPIC} not reached; partitions {behind} behind", topic=TOPIC)
        for tp, batch in consumer.poll(timeout_ms=200).items():
            end = ends[tp]
            out.extend(
                RawOffsetsRecord(tp.partition, r.offset, r.timestamp, r.key, r.value)
                for r in batch
                if r.offset < end
            )
        # Positions move past control records and aborted data too, so they decide "done".
        pending = {tp for tp in pending if consumer.position(tp) < ends[tp]}
    out.sort(key=lambda r: (r.partition, r.offset))
    return OffsetsTopicSnapshot(out, {tp.partition: end for tp, end in ends.items()})
