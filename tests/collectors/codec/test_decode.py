"""The ``decode`` seam: share/streams records, unknown types, and nothing but DecodeError escaping."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.codec import (
    GroupTombstone,
    OffsetCommitTombstone,
    ShareGroupRecord,
    StreamsGroupRecord,
    UnknownRecord,
    decode,
)
from collectors.errors import DecodeError

from . import encode as e

SHARE_MEMBER_TYPES = {10, 13, 14}
STREAMS_MEMBER_TYPES = {19, 21, 22}


@pytest.mark.parametrize("record_type", range(9, 16))
def test_decode_share_group_record_keeps_raw_value_and_version(record_type: int) -> None:
    member = "m-1" if record_type in SHARE_MEMBER_TYPES else None
    key = e.group_key(record_type, "share-g", member)
    value = e.i16(0) + b"\x01\x02\x03"
    assert decode(key, value) == ShareGroupRecord(record_type, "share-g", member, 0, value)


@pytest.mark.parametrize("record_type", range(17, 25))
def test_decode_streams_group_record_keeps_raw_value_and_version(record_type: int) -> None:
    member = "m-1" if record_type in STREAMS_MEMBER_TYPES else None
    key = e.group_key(record_type, "app-id", member)
    value = e.i16(2) + b"\x00"
    assert decode(key, value) == StreamsGroupRecord(record_type, "app-id", member, 2, value)


@pytest.mark.parametrize("record_type", [*range(9, 16), *range(17, 25)])
def test_decode_share_and_streams_null_value_is_tombstone(record_type: int) -> None:
    member = "m-1" if record_type in SHARE_MEMBER_TYPES | STREAMS_MEMBER_TYPES else None
    key = e.group_key(record_type, "g", member)
    assert decode(key, None) == GroupTombstone(record_type, "g", member_id=member)


@pytest.mark.parametrize("record_type", [25, 99, 1000, -1])
def test_decode_unknown_type_is_unknown_record(record_type: int) -> None:
    key = e.i16(record_type) + b"anything"
    assert decode(key, e.i16(4) + b"??") == UnknownRecord(record_type, 4, key, e.i16(4) + b"??")
    assert decode(key, None) == UnknownRecord(record_type, None, key, None)


@pytest.mark.parametrize("value", [b"", b"\x00"])
def test_decode_value_without_version_is_decode_error(value: bytes) -> None:
    with pytest.raises(DecodeError, match="value: truncated") as info:
        decode(e.group_key(23, "g"), value, offset=5, partition=2)
    assert (info.value.offset, info.value.partition) == (5, 2)


@pytest.mark.parametrize("key", [b"", b"\x00"])
def test_decode_key_without_type_is_decode_error(key: bytes) -> None:
    with pytest.raises(DecodeError, match="key: truncated"):
        decode(key, None)


def test_decode_error_chains_the_original_exception() -> None:
    with pytest.raises(DecodeError) as info:
        decode(e.offset_key("g", "t", 0), b"\x00\x03\x00")
    assert info.value.__cause__ is not None
    assert info.value.topic == "__consumer_offsets"


def test_decode_invalid_utf8_group_is_decode_error() -> None:
    key = e.i16(1) + e.i16(2) + b"\xff\xfe" + e.string("t") + e.i32(0)
    with pytest.raises(DecodeError, match="UTF-8"):
        decode(key, e.offset_value(3, 1))


def test_decode_tombstones_of_offset_keys() -> None:
    assert decode(e.offset_key("g", "t", 3), None) == OffsetCommitTombstone(1, "g", "t", 3)


def _decode_or_decode_error(key: bytes, value: bytes | None) -> None:
    with contextlib.suppress(DecodeError):
        decode(key, value, offset=1, partition=0)


# Keys that start with every known record type, so fuzzing reaches every decoder, not only "unknown".
_known_prefixes = st.sampled_from([e.i16(t) for t in range(0, 26)])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(key=st.binary(max_size=64), value=st.none() | st.binary(max_size=128))
def test_decode_arbitrary_bytes_raise_only_decode_error(key: bytes, value: bytes | None) -> None:
    _decode_or_decode_error(key, value)


@given(
    prefix=_known_prefixes,
    key_rest=st.binary(max_size=40),
    version=st.integers(min_value=-2, max_value=6),
    value_rest=st.binary(max_size=200),
)
def test_decode_typed_garbage_raises_only_decode_error(
    prefix: bytes, key_rest: bytes, version: int, value_rest: bytes
) -> None:
    _decode_or_decode_error(prefix + key_rest, e.i16(version) + value_rest)


_VALID = [
    (e.offset_key("g", "t", 1), e.offset_value(4, 5, "m" * 130, 6, leader_epoch=2, topic_id=bytes(16))),
    (e.offset_key("g", "t", 1), e.offset_value(1, 5, "m", 6)),
    (
        e.group_key(2, "g"),
        e.group_value(4, e.Group(members=[e.Member("m", assignment=e.assignment(0, [("t", [1])]))])),
    ),
    (e.group_key(8, "g", "m"), e.cg_current_member_assignment_value(1, 0, 0, [(bytes(16), [1, 2])], [])),
]


@given(case=st.sampled_from(_VALID), data=st.data())
def test_decode_mutated_valid_records_raise_only_decode_error(
    case: tuple[bytes, bytes], data: st.DataObject
) -> None:
    key, value = case
    buf = bytearray(value)
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        buf[data.draw(st.integers(min_value=0, max_value=len(buf) - 1))] = data.draw(st.integers(0, 255))
    _decode_or_decode_error(key, bytes(buf))
