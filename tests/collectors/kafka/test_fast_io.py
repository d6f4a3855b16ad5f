"""RawRequest/RawResponse through kafka-python's real protocol parser, and decode()'s fallback rules."""

from __future__ import annotations

import struct
from typing import Any

import kafka.errors as kerr
import pytest
from kafka.protocol.consumer import ListOffsetsResponse, OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.parser import KafkaProtocol

from collectors.errors import KafkaUnavailableError
from collectors.kafka import fast_offsets as fast_offsets
from collectors.kafka.errors import translate
from collectors.kafka.fast_io import RawRequest, RawResponse, decode
from collectors.kafka.fast_wire import Malformed
from tests.collectors import kafka_samples as samples


def _requests() -> list[tuple[Any, Any, int]]:
    offset_fetch = OffsetFetchRequest(
        groups=[OffsetFetchRequest.OffsetFetchRequestGroup(group_id="g", topics=None)],
        require_stable=False,
        min_version=8,
        max_version=8,
    )
    metadata = MetadataRequest(topics=MetadataRequest.ALL_TOPICS, allow_auto_topic_creation=False)
    return [
        (offset_fetch, OffsetFetchResponse, 8),
        (metadata, MetadataResponse, 13),
        (metadata, MetadataResponse, 8),
    ]


@pytest.mark.parametrize(("request_", "response_class", "version"), _requests(), ids=["of8", "md13", "md8"])
def test_raw_request_wrapped_sends_same_bytes_as_kafka_python(
    request_: Any, response_class: Any, version: int
) -> None:
    ours, theirs = KafkaProtocol(client_id="og"), KafkaProtocol(client_id="og")
    raw = RawRequest.wrap(request_, response_class)
    raw.API_VERSION = request_.API_VERSION = version

    ours.send_request(raw)
    theirs.send_request(request_)

    assert ours.send_bytes() == bytes(theirs.send_bytes())


def test_raw_request_negotiation_bounds_taken_from_wrapped_request() -> None:
    request, response_class, _ = _requests()[0]

    raw = RawRequest.wrap(request, response_class)

    assert (raw._min_version, raw._max_version, raw.API_KEY) == (8, 8, OffsetFetchRequest.API_KEY)


def test_raw_response_parser_hands_back_body_and_throttle_undecoded() -> None:
    parser = KafkaProtocol(client_id="og")
    raw = RawRequest.wrap(*_requests()[0][:2])
    raw.API_VERSION = 8
    correlation_id = parser.send_request(raw)
    body = samples.offset_fetch([("g", 0, {"t": [(0, 7, 1, "", 0)]})])
    body = struct.pack(">i", 250) + body[4:]  # throttled 250 ms
    payload = struct.pack(">i", correlation_id) + b"\x00" + body  # flexible response header: id, no tags

    [(got_id, response)] = parser.receive_bytes(struct.pack(">i", len(payload)) + payload)

    assert got_id == correlation_id
    assert isinstance(response, RawResponse)
    assert (response.body, response.version, response.throttle_time_ms) == (body, 8, 250)
    assert response.response_class is OffsetFetchResponse[8]


def test_raw_response_version_without_throttle_field_not_throttled() -> None:
    body = MetadataResponse(brokers=[], topics=[]).encode(version=2)  # v0-2 start with the brokers array
    body = b"\x00\x00\x7f\xff" + bytes(body)[4:]  # a count that would read as a 32 s throttle

    assert RawResponse(MetadataResponse[2], 2, body).throttle_time_ms == 0
    assert RawResponse(MetadataResponse[3], 3, body).throttle_time_ms == 0x7FFF


def _raw(body: bytes, version: int = 10) -> RawResponse:
    return RawResponse(ListOffsetsResponse[version], version, body)


def test_decode_fast_version_uses_fast_decoder() -> None:
    body = samples.list_offsets({"a": [(0, 0, 5, 1)]})

    got = decode(_raw(body), lambda raw: "fast", lambda response: "slow", fast_offsets.LIST_OFFSETS_VERSIONS)

    assert got == "fast"


def test_decode_other_version_uses_kafka_python() -> None:
    body = samples.list_offsets({"a": [(0, 0, 5, 1)]}, version=5)

    got = decode(
        _raw(body, version=5),
        lambda raw: pytest.fail("fast decoder used for v5"),
        lambda response: response.topics[0].partitions[0].offset,
        fast_offsets.LIST_OFFSETS_VERSIONS,
    )

    assert got == 5


def test_decode_fast_decoder_refusing_falls_back_to_kafka_python() -> None:
    body = samples.list_offsets({"a": [(0, 0, 5, 1)]})

    def refuse(raw: RawResponse) -> str:
        raise Malformed("unexpected")

    got = decode(
        _raw(body), refuse, lambda response: response.topics[0].name, fast_offsets.LIST_OFFSETS_VERSIONS
    )

    assert got == "a"


def test_decode_garbage_for_both_raises_protocol_error_translated_to_unavailable() -> None:
    garbage = b"\x00\x00\x00\x00\x05\xff"

    with pytest.raises(kerr.KafkaProtocolError) as caught:
        decode(
            _raw(garbage),
            lambda raw: fast_offsets.list_offsets(raw.body),
            lambda response: pytest.fail(f"decoded garbage: {response}"),
            fast_offsets.LIST_OFFSETS_VERSIONS,
        )

    translated = translate(caught.value, cluster="c", what="ListOffsets to 1")
    assert isinstance(translated, KafkaUnavailableError)
    assert translated.cluster == "c"


def test_decode_unexpected_fast_bug_not_swallowed() -> None:
    body = samples.list_offsets({"a": [(0, 0, 5, 1)]})

    def buggy(raw: RawResponse) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        decode(_raw(body), buggy, lambda response: "slow", fast_offsets.LIST_OFFSETS_VERSIONS)
