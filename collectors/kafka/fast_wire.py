"""Primitive readers of Kafka's flexible (KIP-482) wire format, for the hand-written fast decoders.

kafka-python decodes every response into one data-class object per array element; at 20,000 partitions
and 50,000 committed group-partitions per cycle that object churn was most of a cycle's CPU. The fast
decoders in :mod:`collectors.kafka.fast_offsets` and :mod:`collectors.kafka.fast_metadata` read only the
exact response versions we pin, straight from the bytes, with these helpers. Anything they do not expect
raises :class:`Malformed` (or the ``struct.error``/``IndexError`` a short buffer gives), and the caller
falls back to kafka-python's own decoder (:func:`collectors.kafka.fast_io.decode`).

Every helper takes ``(data, pos)`` and returns ``(value, new_pos)``: in these loops over tens of thousands
of partitions, plain functions over ``bytes`` are several times cheaper in CPython than a reader object
like :class:`collectors.codec.wire.Reader` (which the ``__consumer_offsets`` decoders use).
"""

from __future__ import annotations

import struct
import sys
import uuid

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
_NULL_UUID = bytes(16)


class Malformed(ValueError):
    """The bytes are not what the fast decoder expects; decode them with kafka-python instead."""


# What a fast decoder may raise on bytes it cannot read (a short buffer gives struct.error or IndexError).
FAST_DECODE_ERRORS = (Malformed, struct.error, IndexError, UnicodeDecodeError)


def uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint (at most 5 bytes, as Kafka's ``UnsignedVarInt32``)."""
    b = data[pos]
    if b < 0x80:  # nearly every length and tag count fits one byte
        return b, pos + 1
    value, shift = b & 0x7F, 7
    for i in range(pos + 1, pos + 5):
        b = data[i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i + 1
        shift += 7
    raise Malformed(f"varint longer than 5 bytes at {pos}")


def array_len(data: bytes, pos: int) -> tuple[int, int]:
    """The element count of a compact array that may not be null."""
    n, pos = uvarint(data, pos)
    if n == 0:
        raise Malformed(f"null array at {pos}")
    return n - 1, pos


def string(data: bytes, pos: int) -> tuple[str, int]:
    """A compact string that may not be null, interned: these are names (topics, groups, hosts), each
    read again in every response, and kept by the observations, the store's caches and detection."""
    value, pos = nullable_string(data, pos)
    if value is None:
        raise Malformed(f"null string at {pos}")
    return sys.intern(value), pos


def nullable_string(data: bytes, pos: int) -> tuple[str | None, int]:
    """A compact string, or None for null; a string running past the end is malformed."""
    n, pos = uvarint(data, pos)
    if n == 0:
        return None, pos
    end = pos + n - 1
    if end > len(data):  # slicing would silently return a shorter string
        raise Malformed(f"string of {n - 1} bytes runs past the end at {pos}")
    return data[pos:end].decode(), end


def int32_array(data: bytes, pos: int) -> tuple[tuple[int, ...], int]:
    """A compact array of int32 that may not be null."""
    n, pos = array_len(data, pos)
    end = pos + 4 * n
    if end > len(data):
        raise Malformed(f"int32 array of {n} runs past the end at {pos}")
    return struct.unpack_from(f">{n}i", data, pos), end


def topic_id(data: bytes, pos: int) -> tuple[str | None, int]:
    """A UUID as its canonical string; the all-zero UUID (none assigned) is None, as kafka-python has it."""
    raw = data[pos : pos + 16]
    if len(raw) != 16:
        raise Malformed(f"truncated uuid at {pos}")
    return (None if raw == _NULL_UUID else str(uuid.UUID(bytes=raw))), pos + 16


def skip_tags(data: bytes, pos: int) -> int:
    """Skip a tagged-field section; none of the fields we read is tagged, so unknown ones are ignored."""
    count, pos = uvarint(data, pos)
    for _ in range(count):
        _tag, pos = uvarint(data, pos)
        size, pos = uvarint(data, pos)
        pos += size
    if pos > len(data):
        raise Malformed(f"tagged field runs past the end at {pos}")
    return pos


def int32(data: bytes, pos: int) -> tuple[int, int]:
    """A big-endian int32."""
    return INT32.unpack_from(data, pos)[0], pos + 4


def expect_end(data: bytes, pos: int) -> None:
    """Refuse trailing bytes: they mean we misread the layout, so kafka-python should decode instead."""
    if pos != len(data):
        raise Malformed(f"decoded {pos} of {len(data)} bytes")


def uvarint_bytes(value: int) -> bytes:
    """The unsigned varint encoding of ``value`` (for the fast request encoder)."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def compact_string_bytes(value: str) -> bytes:
    """A non-null compact string."""
    raw = value.encode()
    return uvarint_bytes(len(raw) + 1) + raw
