"""Kafka wire primitives as Spark SQL expression text (positions are 1-based byte positions).

Spark has no function that reads an integer out of binary. Decoded as ISO-8859-1, each byte becomes the
character with the same code (a column of its own, computed once per buffer), and ``ascii`` of a
one-character substring is that byte: integers are then shifts and ORs of bytes, all code-generated,
no Python and no string parsing (``conv(hex(...))`` was 4x slower). Java int/long shifts wrap, so the
two's complement sign comes for free. Compact (flexible) lengths are unsigned varints of one to three
bytes (strings are at most 32767 bytes, so ``length + 1`` never needs more). Positions may be
expressions over earlier columns. A position past the end reads as 0: callers check lengths.
"""

from __future__ import annotations

LATIN1 = "ISO-8859-1"


def latin1(col: str) -> str:
    """The byte-per-character text of binary ``col`` that the readers below take."""
    return f"decode({col}, '{LATIN1}')"


def u8(text: str, pos: str | int) -> str:
    return f"ascii(substr({text}, {pos}, 1))"


def _at(pos: str | int, i: int) -> str:
    return str(pos + i) if isinstance(pos, int) else f"({pos}) + {i}"


def i16(text: str, pos: str | int) -> str:
    word = f"(shiftleft({u8(text, pos)}, 8) | {u8(text, _at(pos, 1))})"
    return f"shiftright(shiftleft({word}, 16), 16)"


def i32(text: str, pos: str | int) -> str:
    return "(" + " | ".join(f"shiftleft({u8(text, _at(pos, i))}, {24 - 8 * i})" for i in range(4)) + ")"


def i64(text: str, pos: str | int) -> str:
    parts = [f"shiftleft(cast({u8(text, _at(pos, i))} as bigint), {56 - 8 * i})" for i in range(8)]
    return "(" + " | ".join(parts) + ")"


def uvarint(b0: str, b1: str, b2: str) -> str:
    """The unsigned varint whose first three bytes are the int expressions ``b0``, ``b1``, ``b2``."""
    return (
        f"(case when {b0} < 128 then {b0} "
        f"when {b1} < 128 then ({b0} - 128) + {b1} * 128 "
        f"else ({b0} - 128) + ({b1} - 128) * 128 + {b2} * 16384 end)"
    )


def uvarint_size(b0: str, b1: str) -> str:
    """Bytes taken by a varint starting with ``b0``, ``b1`` (1–3; longer ones fail the length checks)."""
    return f"(case when {b0} < 128 then 1 when {b1} < 128 then 2 else 3 end)"


def utf8(col: str, pos: str | int, length: str | int) -> str:
    return f"decode(substr({col}, {pos}, {length}), 'UTF-8')"


def topic_id(col: str, pos: str | int) -> str:
    """Kafka's text form of the 16-byte Uuid at ``pos``: URL-safe base64, unpadded (22 characters)."""
    return f"substr(translate(base64(substr({col}, {pos}, 16)), '+/', '-_'), 1, 22)"
