"""Readers for Kafka's primitive wire types (big-endian ints, varints, strings, arrays, tagged fields).

A :class:`Reader` walks one buffer; ``flexible`` switches strings, bytes and arrays to their compact
(unsigned varint ``length + 1``) forms. Every failure raises :class:`WireError` naming the position.
"""

from __future__ import annotations

import base64
import struct
from functools import lru_cache

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")

# Kafka refuses strings longer than a signed int16 in every encoding.
MAX_STRING = 0x7FFF


class WireError(ValueError):
    """Bytes are truncated or corrupt; ``position`` is where reading failed."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at byte {position}")
        self.position = position


@lru_cache(maxsize=4096)  # few distinct topics, and every 4.1 commit carries one: cache the text
def topic_id_str(raw: bytes) -> str:
    """Kafka's text form of a Uuid: URL-safe base64 without padding (as ``kafka-topics`` prints it)."""
    return base64.urlsafe_b64encode(raw)[:22].decode("ascii")


class Reader:
    """Sequential reader over one buffer; ``flexible`` selects the compact encodings."""

    __slots__ = ("buf", "flexible", "part", "pos")

    def __init__(self, buf: bytes, pos: int = 0, *, flexible: bool = False, part: str = "value") -> None:
        self.buf = buf
        self.pos = pos
        self.flexible = flexible
        self.part = part  # "key", "value", "assignment"...: names the buffer in error messages

    def error(self, message: str, position: int | None = None) -> WireError:
        """A WireError naming this buffer and ``position`` (default: the current one)."""
        return WireError(f"{self.part}: {message}", self.pos if position is None else position)

    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def take(self, n: int) -> bytes:
        """The next ``n`` raw bytes."""
        start = self.pos
        end = start + n
        if n < 0 or end > len(self.buf):
            raise self.error(f"truncated: need {n} bytes, have {len(self.buf) - start}", start)
        self.pos = end
        return self.buf[start:end]

    def _fixed(self, fmt: struct.Struct) -> int:
        start = self.pos
        if start + fmt.size > len(self.buf):
            raise self.error(f"truncated: need {fmt.size} bytes, have {len(self.buf) - start}", start)
        self.pos = start + fmt.size
        value: int = fmt.unpack_from(self.buf, start)[0]
        return value

    def int8(self) -> int:
        return self._fixed(INT8)

    def int16(self) -> int:
        return self._fixed(INT16)

    def int32(self) -> int:
        return self._fixed(INT32)

    def int64(self) -> int:
        return self._fixed(INT64)

    def uvarint(self) -> int:
        """Unsigned LEB128 int32, at most 5 bytes (Kafka's ``readUnsignedVarint``)."""
        buf = self.buf
        start = pos = self.pos
        result = shift = 0
        while True:
            if pos >= len(buf):
                raise self.error("truncated varint", start)
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift > 28:
                raise self.error("varint longer than 5 bytes", start)
        if result > 0xFFFFFFFF:
            raise self.error("varint overflows 32 bits", start)
        self.pos = pos
        return result

    def varint(self) -> int:
        """Zig-zag signed int32."""
        raw = self.uvarint()
        return (raw >> 1) ^ -(raw & 1)

    def varlong(self) -> int:
        """Zig-zag signed int64, at most 10 bytes."""
        buf = self.buf
        start = pos = self.pos
        raw = shift = 0
        while True:
            if pos >= len(buf):
                raise self.error("truncated varlong", start)
            byte = buf[pos]
            pos += 1
            raw |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift > 63:
                raise self.error("varlong longer than 10 bytes", start)
        self.pos = pos
        return (raw >> 1) ^ -(raw & 1)

    def nullable_string(self) -> str | None:
        start = self.pos
        n = self.uvarint() - 1 if self.flexible else self._fixed(INT16)
        if n < 0:
            if n == -1:
                return None
            raise self.error(f"negative string length {n}", start)
        if n > MAX_STRING:
            raise self.error(f"string length {n} exceeds {MAX_STRING}", start)
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.error(f"invalid UTF-8 in string: {exc.reason}", start) from exc

    def string(self) -> str:
        start = self.pos
        value = self.nullable_string()
        if value is None:
            raise self.error("null in a non-nullable string", start)
        return value

    def nullable_bytes(self) -> bytes | None:
        start = self.pos
        n = self.uvarint() - 1 if self.flexible else self._fixed(INT32)
        if n < 0:
            if n == -1:
                return None
            raise self.error(f"negative bytes length {n}", start)
        return self.take(n)

    def bytes_(self) -> bytes:
        start = self.pos
        value = self.nullable_bytes()
        if value is None:
            raise self.error("null in non-nullable bytes", start)
        return value

    def array_length(self, min_item_size: int = 1) -> int:
        """Element count of a non-nullable array, refused when the buffer cannot hold that many."""
        start = self.pos
        n = self.uvarint() - 1 if self.flexible else self._fixed(INT32)
        if n < 0:
            raise self.error(f"invalid array length {n}", start)
        # Refuse absurd counts before looping, so corrupt input cannot make us spin or allocate.
        if n * min_item_size > self.remaining():
            raise self.error(f"truncated: array of {n} items in {self.remaining()} bytes", start)
        return n

    def int32_array(self) -> tuple[int, ...]:
        n = self.array_length(4)
        start = self.pos
        self.pos = start + 4 * n
        return struct.unpack_from(f">{n}i", self.buf, start)

    def string_array(self) -> tuple[str, ...]:
        return tuple(self.string() for _ in range(self.array_length()))

    def uuid(self) -> str:
        return topic_id_str(self.take(16))

    def tagged_fields(self) -> dict[int, bytes]:
        """Raw payloads of a tagged-field section by tag; callers parse the tags they know."""
        count = self.uvarint()
        if count > self.remaining():
            raise self.error(f"truncated: {count} tagged fields in {self.remaining()} bytes", self.pos)
        tags: dict[int, bytes] = {}
        for _ in range(count):
            tag = self.uvarint()
            tags[tag] = self.take(self.uvarint())
        return tags

    def skip_tagged_fields(self) -> None:
        """Read a tagged-field section only to get past it (flexible versions only)."""
        if self.flexible:
            self.tagged_fields()
