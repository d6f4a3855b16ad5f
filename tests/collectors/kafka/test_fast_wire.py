"""Primitive readers of the fast decoders: varints, compact strings and arrays, tagged fields."""

from __future__ import annotations

import pytest

from collectors.kafka.fast_wire import (
    FAST_DECODE_ERRORS,
    Malformed,
    array_len,
    compact_string_bytes,
    int32_array,
    nullable_string,
    skip_tags,
    string,
    topic_id,
    uvarint,
    uvarint_bytes,
)


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16_383, 16_384, 2**31 - 1, 2**32 - 1])
def test_uvarint_encoded_value_reads_back_to_the_end(value: int) -> None:
    raw = b"\xaa" + uvarint_bytes(value) + b"\xbb"

    assert uvarint(raw, 1) == (value, len(raw) - 1)


def test_uvarint_six_bytes_refused() -> None:
    with pytest.raises(Malformed):
        uvarint(b"\x80\x80\x80\x80\x80\x01", 0)


def test_string_round_trip_and_null_refused_where_not_nullable() -> None:
    raw = compact_string_bytes("é-topic")

    assert string(raw, 0) == ("é-topic", len(raw))
    assert nullable_string(b"\x00", 0) == (None, 1)
    with pytest.raises(Malformed):
        string(b"\x00", 0)


def test_string_running_past_the_end_refused_not_shortened() -> None:
    with pytest.raises(Malformed):
        nullable_string(b"\x05abc", 0)


def test_string_invalid_utf8_refused() -> None:
    with pytest.raises(FAST_DECODE_ERRORS):
        nullable_string(b"\x03\xff\xfe", 0)


def test_array_len_null_refused_empty_is_zero() -> None:
    assert array_len(b"\x01", 0) == (0, 1)
    with pytest.raises(Malformed):
        array_len(b"\x00", 0)


def test_int32_array_reads_values_and_refuses_short_buffer() -> None:
    assert int32_array(b"\x03\x00\x00\x00\x01\xff\xff\xff\xff", 0) == ((1, -1), 9)
    with pytest.raises(Malformed):
        int32_array(b"\x03\x00\x00\x00\x01", 0)


def test_skip_tags_skips_unknown_fields_and_refuses_overrun() -> None:
    raw = b"\x02" + b"\x05\x02ab" + b"\x81\x01\x00" + b"!"  # two fields: tag 5 (2 bytes), tag 129 (empty)

    assert skip_tags(raw, 0) == len(raw) - 1
    with pytest.raises(Malformed):
        skip_tags(b"\x01\x05\x09ab", 0)


def test_topic_id_zero_uuid_is_none_other_canonical_text() -> None:
    assert topic_id(bytes(16), 0) == (None, 16)
    assert topic_id(bytes(range(16)), 0) == ("00010203-0405-0607-0809-0a0b0c0d0e0f", 16)
    with pytest.raises(Malformed):
        topic_id(bytes(15), 0)


def test_string_names_are_one_copy_per_name() -> None:
    """Names (topics, groups) come back in every response: each is kept once (interned)."""
    raw = compact_string_bytes("orders-" + "7") * 2
    first, pos = string(raw, 0)
    second, _ = string(raw, pos)
    assert first == "orders-7" and first is second
