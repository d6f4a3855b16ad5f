"""``partition_for`` against Java's ``Utils.abs(groupId.hashCode()) % n``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.codec import java_string_hash, partition_for


def _reference_hash(s: str) -> int:
    """Straightforward String.hashCode(): 31*h + c over UTF-16 code units, int32 wrap-around."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


# Produced by /tmp/Hash.java (Java 17, `java Hash.java`): hashCode, abs % 50, abs % 7.
JAVA = [
    ("", 0, 0, 0),
    ("a", 97, 47, 6),
    ("my-group", -1906497762, 12, 1),
    ("orders-consumer-17", -1742707595, 45, 6),
    ("console-consumer-12345", 158455506, 6, 6),
    ("polygenelubricants", -2147483648, 0, 0),
    ("café", 3045921, 21, 4),
    ("中文", 646394, 44, 0),
    ("😀", 1772899, 49, 2),
    ("𝄞", 1772394, 44, 1),
    ("grp-😀-é-中", 1180292295, 45, 0),
    ("a-much-longer-consumer-group-identifier-used-by-a-streams-application-0001", 86726361, 11, 1),
]


@pytest.mark.parametrize(("group", "java_hash", "mod50", "mod7"), JAVA)
def test_java_string_hash_matches_java(group: str, java_hash: int, mod50: int, mod7: int) -> None:
    assert java_string_hash(group) == java_hash
    assert _reference_hash(group) == java_hash


@pytest.mark.parametrize(("group", "java_hash", "mod50", "mod7"), JAVA)
def test_partition_for_matches_java(group: str, java_hash: int, mod50: int, mod7: int) -> None:
    assert partition_for(group, 50) == mod50
    assert partition_for(group, 7) == mod7


def test_partition_for_min_value_hash_maps_to_partition_zero() -> None:
    # Utils.abs(Integer.MIN_VALUE) == 0, whereas a plain abs() would give 2**31 % 7 == 2.
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert partition_for("polygenelubricants", 7) == 0


def test_partition_for_non_bmp_counts_two_code_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00: 31 * 0xD83D + 0xDE00.
    assert java_string_hash("😀") == 31 * 0xD83D + 0xDE00


def test_partition_for_non_positive_count_is_refused() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        partition_for("g", 0)


@given(group=st.text(max_size=300), count=st.integers(min_value=1, max_value=1000))
def test_partition_for_agrees_with_reference(group: str, count: int) -> None:
    h = _reference_hash(group)
    expected = (0 if h == -(2**31) else abs(h)) % count
    assert partition_for(group, count) == expected
    assert java_string_hash(group) == h


def test_java_string_hash_lone_surrogate_is_one_code_unit() -> None:
    assert java_string_hash("\ud800") == 0xD800
