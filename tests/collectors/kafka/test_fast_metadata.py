"""Hand-written Metadata decoder against kafka-python's decoder, and its per-topic reuse."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.metadata import MetadataResponse

from collectors.kafka import fast_fallback as fallback
from collectors.kafka import fast_metadata as fast
from collectors.kafka.fast_wire import FAST_DECODE_ERRORS
from collectors.model import Broker, PartitionInfo, TopicInfo
from tests.collectors import kafka_samples as samples

TID = uuid.UUID("6f1c2a57-3d7e-4d2b-9a43-0e4c2d5f8a11")
BROKERS = [(3, "b3", 9094, None), (1, "b1", 9092, "rack-a")]
TOPICS: list[tuple[int, str, uuid.UUID | None, bool, list[samples.MPart]]] = [
    (
        0,
        "orders",
        TID,
        False,
        [
            (0, 2, 3, 7, [3, 1], [3], []),  # listed out of order: sorted by index
            (5, 0, -1, 4, [1], [], [1]),  # LEADER_NOT_AVAILABLE, offline
            (0, 1, 1, 0, [1, 3], [1, 3], []),
        ],
    ),
    (0, "__consumer_offsets", None, True, [(0, 0, 1, 0, [1], [1], [])]),  # no topic id: zero UUID
    (3, "gone", None, False, []),  # UNKNOWN_TOPIC_OR_PARTITION with no partitions: left out
]


@pytest.mark.parametrize("version", list(fast.METADATA_VERSIONS))
@pytest.mark.parametrize("cluster_id", ["cid", None])
def test_metadata_decode_same_snapshot_as_kafka_python(version: int, cluster_id: str | None) -> None:
    body = samples.metadata(BROKERS, TOPICS, cluster_id=cluster_id, controller=-1, version=version)

    snapshot, _cache = fast.metadata(body, version, "c", {})

    assert snapshot == fallback.snapshot(MetadataResponse[version].decode(body), "c")
    assert snapshot.cluster_id == cluster_id
    assert snapshot.controller_id is None
    assert snapshot.brokers == (Broker(1, "b1", 9092, "rack-a"), Broker(3, "b3", 9094, None))
    assert [t.name for t in snapshot.topics] == ["__consumer_offsets", "orders"]
    offsets_topic, orders = snapshot.topics
    assert (offsets_topic.internal, offsets_topic.topic_id) == (True, None)
    assert orders.topic_id == str(TID)
    assert orders.partitions[0] == PartitionInfo("orders", 0, None, 4, (1,), (), (1,), "LEADER_NOT_AVAILABLE")
    assert [p.partition for p in orders.partitions] == [0, 1, 2]


@pytest.mark.parametrize("at", [-9, -4, -1], ids=["partition", "topic", "response"])
def test_metadata_unknown_tagged_field_skipped_like_kafka_python(at: int) -> None:
    plain = samples.metadata(BROKERS[:1], [(0, "t", TID, False, [(0, 0, 1, 0, [1], [1], [])])])
    body = samples.with_tag(plain, len(plain) + at)

    snapshot, _ = fast.metadata(body, 13, "c", {})

    assert snapshot == fallback.snapshot(MetadataResponse[13].decode(body), "c")
    assert snapshot.topics[0].partitions[0].leader == 1


def test_metadata_unchanged_topic_reused_changed_topic_redecoded() -> None:
    one = (0, "one", TID, False, [(0, 0, 1, 0, [1], [1], [])])
    before = samples.metadata(BROKERS, [one, (0, "two", None, False, [(0, 0, 1, 0, [1], [1], [])])])
    after = samples.metadata(BROKERS, [one, (0, "two", None, False, [(0, 0, 3, 1, [1, 3], [3], [])])])
    first, cache = fast.metadata(before, 13, "c", {})

    second, _ = fast.metadata(after, 13, "c", cache)

    assert second.topics[0] is first.topics[0]
    assert second.topics[1].partitions[0].leader == 3
    assert second == fallback.snapshot(MetadataResponse[13].decode(after), "c")


def test_metadata_cached_topic_with_other_name_not_reused() -> None:
    body = samples.metadata(BROKERS, [(0, "t", None, False, [(0, 0, 1, 0, [1], [1], [])])])
    stale = {"t": (b"other bytes", TopicInfo("t", False, ()))}

    snapshot, _ = fast.metadata(body, 13, "c", stale)

    assert len(snapshot.topics[0].partitions) == 1


def test_metadata_topic_without_name_left_to_kafka_python() -> None:
    body = samples.metadata(BROKERS, [(0, None, TID, False, [])])  # type: ignore[list-item]

    with pytest.raises(FAST_DECODE_ERRORS):
        fast.metadata(body, 13, "c", {})


def test_metadata_every_truncation_refused() -> None:
    body = samples.metadata(BROKERS, TOPICS)

    for end in range(len(body)):
        with pytest.raises(FAST_DECODE_ERRORS):
            fast.metadata(body[:end], 13, "c", {})


def test_metadata_v12_body_read_as_v13_refused() -> None:
    body = samples.metadata(BROKERS, TOPICS, version=12)

    with pytest.raises(FAST_DECODE_ERRORS):
        fast.metadata(body, 13, "c", {})
