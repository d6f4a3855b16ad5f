"""Hand-written ListOffsets/OffsetFetch codecs against kafka-python's own encoder and decoder."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse, OffsetFetchResponse

from collectors.errors import KafkaError
from collectors.kafka import fast_fallback as fallback
from collectors.kafka import fast_offsets as fast
from collectors.kafka.fast_wire import FAST_DECODE_ERRORS
from collectors.model import CommittedOffset
from tests.collectors import kafka_samples as samples

_LOTopic = ListOffsetsRequest.ListOffsetsTopic
_LOPartition = _LOTopic.ListOffsetsPartition

LO_TOPICS: dict[str, list[samples.LOPart]] = {
    "orders": [(0, 0, 120, 4), (1, 0, 0, -1), (2, 6, -1, -1)],  # 6 = NOT_LEADER_OR_FOLLOWER
    "é-topic": [(7, 0, 2**40, 0)],
}
OF_GROUPS: list[tuple[str, int, dict[str, list[samples.OFPart]]]] = [
    ("billing", 0, {"orders": [(0, 100, 4, "meta", 0), (1, 5, -1, None, 0), (2, -1, -1, "", 0)]}),
    ("loading", 14, {}),  # COORDINATOR_LOAD_IN_PROGRESS for the whole group
    ("partly", 0, {"orders": [(0, 1, 0, "", 0), (1, -1, -1, None, 3)], "b": [(0, 9, 2, "", 0)]}),
    ("empty", 0, {}),
]


def _errors(errors: dict[Any, KafkaError]) -> dict[Any, tuple[str, Any, Any, Any, Any]]:
    """Typed errors compared by what they carry (two exception objects are never equal)."""
    return {
        k: (type(e).__name__, getattr(e, "error_code", None), e.group, e.topic, e.partition)
        for k, e in errors.items()
    }


# ---------------------------------------------------------------- ListOffsets


@pytest.mark.parametrize("version", list(fast.LIST_OFFSETS_VERSIONS))
def test_list_offsets_request_each_fast_version_same_bytes_as_kafka_python(version: int) -> None:
    by_topic = {"orders": [0, 1, 2, 300], "é-topic": [7], "x" * 200: [0]}
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[
            _LOTopic(name=n, partitions=[_LOPartition(partition_index=p, timestamp=-2) for p in ps])
            for n, ps in by_topic.items()
        ],
        timeout_ms=30_000,
    )

    assert fast.list_offsets_request(by_topic, -2, 30_000, version) == bytes(request.encode(version=version))


def test_list_offsets_request_version_not_hand_encoded_refused() -> None:
    with pytest.raises(ValueError, match="v5"):
        fast.list_offsets_request({"a": [0]}, -1, 1, 5)


@pytest.mark.parametrize("version", list(fast.LIST_OFFSETS_VERSIONS))
def test_list_offsets_decode_same_as_kafka_python_errors_included(version: int) -> None:
    body = samples.list_offsets(LO_TOPICS, version=version, throttle=25)

    found, failed = fast.list_offsets(body)
    slow_found, slow_errors = fallback.list_offsets(ListOffsetsResponse[version].decode(body), cluster="c")

    assert (
        found == slow_found == {("orders", 0): (120, 4), ("orders", 1): (0, -1), ("é-topic", 7): (2**40, 0)}
    )
    assert failed == [("orders", 2, 6)]
    assert [
        (tp.topic, tp.partition, getattr(e, "error_code", None)) for tp, e in slow_errors.items()
    ] == failed


@pytest.mark.parametrize(
    "at",
    [-3, -2, -1],  # the only partition's tags, its topic's tags, the response's tags
    ids=["partition", "topic", "response"],
)
def test_list_offsets_unknown_tagged_field_skipped_like_kafka_python(at: int) -> None:
    plain = samples.list_offsets({"a": [(1, 0, 5, 3)]})
    body = samples.with_tag(plain, len(plain) + at)

    assert fast.list_offsets(body) == ({("a", 1): (5, 3)}, [])
    assert ListOffsetsResponse[10].decode(body).topics[0].partitions[0].offset == 5


def test_list_offsets_every_truncation_refused() -> None:
    body = samples.list_offsets(LO_TOPICS)

    for end in range(len(body)):
        with pytest.raises(FAST_DECODE_ERRORS):
            fast.list_offsets(body[:end])


def test_list_offsets_trailing_bytes_refused() -> None:
    with pytest.raises(FAST_DECODE_ERRORS):
        fast.list_offsets(samples.list_offsets(LO_TOPICS) + b"\x00")


# ---------------------------------------------------------------- OffsetFetch


def _slow_offset_fetch(body: bytes) -> dict[str, Any]:
    decoded = fallback.offset_fetch(OffsetFetchResponse[8].decode(body), cluster="c")
    return {g: v if isinstance(v, list) else _errors({g: v})[g] for g, v in decoded.items()}


def _fast_offset_fetch(body: bytes, previous: fast.GroupCache | None = None) -> dict[str, Any]:
    decoded, _cache = fast.offset_fetch(body, previous or {})
    return {
        g: v if isinstance(v, list) else ("KafkaResponseError", v.error_code, g, v.topic, v.partition)
        for g, v in decoded.items()
    }


@pytest.mark.parametrize("version", list(fast.OFFSET_FETCH_VERSIONS))
def test_offset_fetch_decode_same_as_kafka_python_errors_nulls_negative_offsets(version: int) -> None:
    body = samples.offset_fetch(OF_GROUPS, version=version)

    got = _fast_offset_fetch(body)

    assert got == _slow_offset_fetch(body)
    assert got["billing"] == [
        CommittedOffset("billing", "orders", 0, 100, 4, "meta"),
        CommittedOffset("billing", "orders", 1, 5, None, ""),  # null metadata, no epoch; -1 offset left out
    ]
    assert got["loading"] == ("KafkaResponseError", 14, "loading", None, None)
    assert got["partly"] == ("KafkaResponseError", 3, "partly", "orders", 1)
    assert got["empty"] == []


@pytest.mark.parametrize("at", [-6, -5, -2, -1], ids=["partition", "topic", "group", "response"])
def test_offset_fetch_unknown_tagged_field_skipped_like_kafka_python(at: int) -> None:
    plain = samples.offset_fetch([("g", 0, {"t": [(0, 7, 1, "", 0)]})])
    body = samples.with_tag(plain, len(plain) + at)

    assert (
        _fast_offset_fetch(body)
        == _slow_offset_fetch(body)
        == {"g": [CommittedOffset("g", "t", 0, 7, 1, "")]}
    )


def test_offset_fetch_unchanged_group_reuses_cached_offsets_changed_one_redecoded() -> None:
    first = samples.offset_fetch(
        [("idle", 0, {"t": [(0, 7, 1, "", 0)]}), ("busy", 0, {"t": [(1, 1, 1, "", 0)]})]
    )
    second = samples.offset_fetch(
        [("idle", 0, {"t": [(0, 7, 1, "", 0)]}), ("busy", 0, {"t": [(1, 2, 1, "", 0)]})]
    )
    _, cache = fast.offset_fetch(first, {})

    decoded, cache2 = fast.offset_fetch(second, cache)

    assert decoded["idle"] == [CommittedOffset("idle", "t", 0, 7, 1, "")]
    assert decoded["idle"] is not cache["idle"][1]  # a copy: callers may extend their list
    assert decoded["idle"][0] is cache["idle"][1][0]  # the same immutable offset, not re-decoded
    assert decoded["busy"] == [CommittedOffset("busy", "t", 1, 2, 1, "")]
    assert set(cache2) == {"idle", "busy"}


def test_offset_fetch_groups_with_errors_not_cached() -> None:
    _, cache = fast.offset_fetch(samples.offset_fetch(OF_GROUPS), {})

    assert set(cache) == {"billing", "empty"}


def test_offset_fetch_every_truncation_refused() -> None:
    body = samples.offset_fetch(OF_GROUPS)

    for end in range(len(body)):
        with pytest.raises(FAST_DECODE_ERRORS):
            fast.offset_fetch(body[:end], {})


def test_offset_fetch_string_length_past_end_refused() -> None:
    body = bytearray(samples.offset_fetch([("g", 0, {"t": [(0, 7, 1, "m", 0)]})]))
    at = body.index(b"\x02m")  # compact string "m": length + 1, then the byte
    body[at] = 0x7F  # claims 126 bytes

    with pytest.raises(FAST_DECODE_ERRORS):
        fast.offset_fetch(bytes(body), {})
