"""Primitive readers: varints, compact and nullable strings/bytes, arrays, tagged fields."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.codec.wire import Reader, WireError, topic_id_str

from . import encode as e


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"\x00", 0),
        (b"\x7f", 127),
        (b"\x80\x01", 128),
        (b"\xac\x02", 300),
        (b"\xff\xff\xff\xff\x0f", 2**32 - 1),
    ],
)
def test_uvarint_known_encodings_decode(raw: bytes, expected: int) -> None:
    r = Reader(raw)
    assert r.uvarint() == expected
    assert r.pos == len(raw)


def test_uvarint_six_bytes_is_refused() -> None:
    with pytest.raises(WireError, match="longer than 5 bytes"):
        Reader(b"\x80\x80\x80\x80\x80\x01").uvarint()


def test_uvarint_truncated_reports_start_position() -> None:
    with pytest.raises(WireError) as info:
        Reader(b"\x00\x80", 1).uvarint()
    assert info.value.position == 1


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_uvarint_round_trips(n: int) -> None:
    assert Reader(e.uvarint(n)).uvarint() == n


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_zigzag_round_trips(n: int) -> None:
    zigzag = (n << 1) ^ (n >> 63)
    assert Reader(e.uvarint(zigzag & (2**64 - 1))).varlong() == n


def test_varint_zigzag_decodes_negative() -> None:
    assert Reader(b"\x01").varint() == -1
    assert Reader(b"\x02").varint() == 1


@pytest.mark.parametrize("flexible", [False, True])
@pytest.mark.parametrize("length", [0, 126, 127, 300])
def test_string_of_length_decodes(flexible: bool, length: int) -> None:
    text = "é" * (length // 2) + "x" * (length % 2)
    assert Reader(e.string(text, flexible), flexible=flexible).string() == text


@pytest.mark.parametrize("flexible", [False, True])
def test_nullable_string_null_is_none(flexible: bool) -> None:
    assert Reader(e.string(None, flexible), flexible=flexible).nullable_string() is None


@pytest.mark.parametrize("flexible", [False, True])
def test_string_null_in_non_nullable_is_refused(flexible: bool) -> None:
    with pytest.raises(WireError, match="null in a non-nullable"):
        Reader(e.string(None, flexible), flexible=flexible).string()


def test_string_invalid_utf8_is_refused() -> None:
    with pytest.raises(WireError, match="UTF-8"):
        Reader(e.i16(2) + b"\xc3\x28").string()


def test_string_length_beyond_int16_is_refused() -> None:
    with pytest.raises(WireError, match="exceeds"):
        Reader(e.uvarint(40000) + b"x" * 40000, flexible=True).string()


@pytest.mark.parametrize("flexible", [False, True])
def test_bytes_null_and_value_decode(flexible: bool) -> None:
    r = Reader(e.blob(None, flexible) + e.blob(b"abc", flexible), flexible=flexible)
    assert r.nullable_bytes() is None
    assert r.bytes_() == b"abc"


def test_array_count_larger_than_buffer_is_refused_before_looping() -> None:
    with pytest.raises(WireError, match="array of 2147483647 items"):
        Reader(e.i32(2**31 - 1) + b"\x00" * 8).int32_array()


@pytest.mark.parametrize("flexible", [False, True])
def test_int32_and_string_arrays_decode(flexible: bool) -> None:
    r = Reader(e.int32s([1, -2, 3], flexible) + e.strings(["a", "bc"], flexible), flexible=flexible)
    assert r.int32_array() == (1, -2, 3)
    assert r.string_array() == ("a", "bc")


def test_tagged_fields_returns_payloads_by_tag() -> None:
    r = Reader(e.tags({0: b"x" * 16, 7: b"yz"}) + b"!", flexible=True)
    assert r.tagged_fields() == {0: b"x" * 16, 7: b"yz"}
    assert r.take(1) == b"!"


def test_tagged_fields_truncated_payload_is_refused() -> None:
    with pytest.raises(WireError, match="truncated"):
        Reader(e.uvarint(1) + e.uvarint(3) + e.uvarint(10) + b"abc", flexible=True).tagged_fields()


def test_error_message_names_the_buffer_part() -> None:
    with pytest.raises(WireError, match=r"^key: truncated.* at byte 0$"):
        Reader(b"\x00", part="key").int16()


def test_topic_id_str_matches_kafka_base64_form() -> None:
    # Kafka's Uuid.toString(): URL-safe base64 without padding.
    raw = bytes.fromhex("8069 30d2 a8f9 4d14 beee d531 ec0e db7c".replace(" ", ""))
    assert topic_id_str(raw) == "gGkw0qj5TRS-7tUx7A7bfA"
