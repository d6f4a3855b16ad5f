"""Which ``__consumer_offsets`` partition holds a group: Kafka's ``Utils.abs(groupId.hashCode()) % n``."""

from __future__ import annotations

import sys
from functools import lru_cache
from operator import mul

_MASK = 0xFFFFFFFF
_NATIVE_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"

# 31**k mod 2**32, grown on demand. Java's h = 31*h + c over the n code units equals
# sum(c[i] * 31**(n-1-i)) mod 2**32, which map/sum evaluate in C instead of a Python loop.
_powers: list[int] = [1]


def _powers_for(n: int) -> list[int]:
    while len(_powers) < n:
        _powers.append(_powers[-1] * 31 & _MASK)
    return _powers


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: 31*h + c over UTF-16 code units, wrapped to a signed int32."""
    if s.isascii():
        units: bytes | memoryview = s.encode("ascii")
    else:
        # Non-BMP characters become two surrogate units, exactly as Java stores them; a lone
        # surrogate (legal in a Java String) passes through as its own unit.
        units = memoryview(s.encode(_NATIVE_UTF16, "surrogatepass")).cast("H")
    n = len(units)
    if n == 0:
        return 0
    h = sum(map(mul, units, _powers_for(n)[n - 1 :: -1])) & _MASK
    return h - 0x100000000 if h & 0x80000000 else h


@lru_cache(maxsize=65536)
def _partition_for(group_id: str, partition_count: int) -> int:
    h = java_string_hash(group_id)
    # Utils.abs maps Integer.MIN_VALUE to 0 instead of overflowing.
    return (0 if h == -0x80000000 else abs(h)) % partition_count


def partition_for(group_id: str, partition_count: int) -> int:
    """The ``__consumer_offsets`` partition a group's records live in."""
    if partition_count <= 0:
        raise ValueError(f"partition_count must be positive, got {partition_count}")
    return _partition_for(group_id, partition_count)
