"""Reading a ``__consumer_offsets`` key's group and topic without its value."""

from __future__ import annotations

import pytest

from collectors.codec.keys import key_names
from tests.collectors.codec.encode import group_key, offset_key


@pytest.mark.parametrize("record_type", [0, 1])
def test_key_names_of_an_offset_commit_are_group_and_topic(record_type: int) -> None:
    assert key_names(offset_key("g1", "orders", 3, record_type)) == ("g1", "orders")


@pytest.mark.parametrize("record_type", [2, 3, 5, 9, 16, 17, 24])
def test_key_names_of_a_group_record_are_the_group_alone(record_type: int) -> None:
    assert key_names(group_key(record_type, "g1", "m" if record_type in (5, 16) else None)) == ("g1", None)


@pytest.mark.parametrize("key", [b"", b"\x00\x01\x00", b"\x00\x01\x00\x05ab", b"\x00\x63\x00\x01a"])
def test_key_names_of_a_short_or_unknown_key_is_none(key: bytes) -> None:
    assert key_names(key) is None
