"""KafkaRawReader without a broker: batch parsing from real record-batch bytes, errors translated."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import kafka.errors as kerr
import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c

from collectors.errors import KafkaError, KafkaResponseError, KafkaTimeoutError, KafkaUnavailableError
from collectors.kafka.raw_reader import KafkaRawReader, parse_records
from collectors.model import Broker, PartitionInfo, TopicInfo
from collectors.raw_reader import TOPIC, RawFetch
from collectors.seam import MetadataSnapshot
from collectors.settings import ClusterSettings

_ATTRIBUTES, _CRC = 21, 17


def batch(
    base: int,
    records: Sequence[tuple[int, bytes | None, bytes | None]],
    *,
    producer_id: int = -1,
    transactional: bool = False,
    control: bool = False,
) -> bytes:
    """One v2 record batch at ``base``; ``records`` are (offset delta, key, value)."""
    builder = DefaultRecordBatchBuilder(
        2, 0, transactional, producer_id, 0 if producer_id >= 0 else -1, -1, 1 << 20
    )
    for delta, key, value in records:
        builder.append(delta, 1_000 + delta, key, value, [])
    buf = bytearray(builder.build())
    struct.pack_into(">q", buf, 0, base)
    if control:  # only brokers write control batches: set the bit and the CRC ourselves
        attrs = struct.unpack_from(">h", buf, _ATTRIBUTES)[0] | 0x20
        struct.pack_into(">h", buf, _ATTRIBUTES, attrs)
        struct.pack_into(">I", buf, _CRC, calc_crc32c(memoryview(buf)[_ATTRIBUTES:]))
    return bytes(buf)


def test_parse_records_before_asked_offset_skipped_next_offset_past_batch() -> None:
    raw = batch(100, [(0, b"k0", b"v0"), (1, b"k1", None), (2, b"k2", b"v2")])
    fetched = parse_records(4, 101, raw)
    assert [(r.offset, r.key, r.value) for r in fetched.records] == [(101, b"k1", None), (102, b"k2", b"v2")]
    assert fetched.next_offset == 103
    assert all(r.partition == 4 and not r.transactional and r.producer_id == -1 for r in fetched.records)


def test_parse_records_compacted_gap_next_offset_from_batch_end() -> None:
    fetched = parse_records(0, 10, batch(10, [(0, b"k", b"v"), (7, b"k", b"w")]))
    assert [r.offset for r in fetched.records] == [10, 17]
    assert fetched.next_offset == 18


def test_parse_records_transaction_and_marker_facts_kept() -> None:
    raw = batch(5, [(0, b"k", b"v")], producer_id=42, transactional=True) + batch(
        6,
        [(0, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00")],
        producer_id=42,
        transactional=True,
        control=True,
    )
    data, mark = parse_records(0, 5, raw).records
    assert (data.producer_id, data.transactional, data.control) == (42, True, False)
    assert (mark.offset, mark.control, mark.marker) == (6, True, "ABORT")


def test_parse_records_trailing_partial_batch_left_for_next_fetch() -> None:
    first, second = batch(0, [(0, b"a", b"1")]), batch(1, [(0, b"b", b"2")])
    fetched = parse_records(0, 0, first + second[: len(second) - 3])
    assert [r.offset for r in fetched.records] == [0]
    assert fetched.next_offset == 1


def test_parse_records_empty_returns_asked_offset() -> None:
    assert parse_records(0, 77, b"") == RawFetch((), 77)


# ---------------------------------------------------------------- KafkaRawReader over a scripted manager

_PARTITIONS = tuple(PartitionInfo(TOPIC, p, 1, 0, (1,), (1,)) for p in range(2))
META = MetadataSnapshot(
    "cid", 1, (Broker(1, "127.0.0.1", 9092, None),), (TopicInfo(TOPIC, True, _PARTITIONS),)
)


class ScriptedManager:
    """Answers ``run`` calls with the next scripted item (raising it if it is an exception)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.calls = 0

    def run(self, work: Any, manager: Any) -> Any:
        self.calls += 1
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


def fetch_response(partition: int, error_code: int = 0, records: bytes = b"") -> Any:
    data = SimpleNamespace(partition_index=partition, error_code=error_code, records=records)
    return SimpleNamespace(responses=[SimpleNamespace(topic=TOPIC, partitions=[data])])


def reader(script: list[Any]) -> tuple[KafkaRawReader, ScriptedManager]:
    manager = ScriptedManager(script)
    admin = SimpleNamespace(_manager=manager, close=lambda: None)
    settings = ClusterSettings(name="c1", bootstrap_servers=["127.0.0.1:9092"])
    return KafkaRawReader(settings, admin_factory=lambda **kw: admin, sleep=lambda s: None), manager


def test_kafka_raw_reader_partition_count_from_metadata() -> None:
    r, _ = reader([META])
    assert r.partition_count() == 2


def test_kafka_raw_reader_missing_topic_unavailable() -> None:
    r, _ = reader([MetadataSnapshot("cid", 1, (), ())])
    with pytest.raises(KafkaUnavailableError, match="does not exist"):
        r.partition_count()


def test_kafka_raw_reader_fetch_parses_response() -> None:
    r, _ = reader([META, fetch_response(1, records=batch(3, [(0, b"k", b"v")]))])
    assert r.fetch(1, 3, 1024) == parse_records(1, 3, batch(3, [(0, b"k", b"v")]))


def test_kafka_raw_reader_moved_leader_refreshes_and_retries() -> None:
    ok = fetch_response(0, records=batch(0, [(0, b"k", b"v")]))
    r, manager = reader([META, fetch_response(0, error_code=6), META, ok])  # 6 = NOT_LEADER_OR_FOLLOWER
    assert [x.offset for x in r.fetch(0, 0, 1024).records] == [0]
    assert manager.calls == 4


def test_kafka_raw_reader_out_of_range_raised_typed_not_retried() -> None:
    r, manager = reader([META, fetch_response(0, error_code=1)])  # 1 = OFFSET_OUT_OF_RANGE
    with pytest.raises(KafkaResponseError) as info:
        r.fetch(0, 0, 1024)
    assert info.value.error_name == "OFFSET_OUT_OF_RANGE" and info.value.partition == 0
    assert manager.calls == 2


def test_kafka_raw_reader_connection_error_translated_after_retries() -> None:
    r, manager = reader([META, kerr.KafkaConnectionError("refused")] * 4)
    with pytest.raises(KafkaUnavailableError) as info:
        r.fetch(0, 0, 1024)
    assert info.value.topic == TOPIC and isinstance(info.value.__cause__, kerr.KafkaConnectionError)
    assert manager.calls == 8


def test_kafka_raw_reader_timeout_translated() -> None:
    r, _ = reader([META, kerr.KafkaTimeoutError("slow")])
    with pytest.raises(KafkaTimeoutError):
        r.fetch(0, 0, 1024)


def test_kafka_raw_reader_closed_refuses() -> None:
    r, _ = reader([])
    r.close()
    with pytest.raises(KafkaError, match="closed"):
        r.partition_count()
