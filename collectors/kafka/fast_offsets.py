"""Hand-written ListOffsets (v6-11) and OffsetFetch (v8-9) codecs: the two largest messages of a cycle.

Every function raises :data:`collectors.kafka.fast_wire.FAST_DECODE_ERRORS` on bytes it does not expect;
:func:`collectors.kafka.fast_io.decode` then falls back to kafka-python. Values come out as
:mod:`collectors.kafka.fast_fallback` builds them from kafka-python's objects, so both paths share the
code after decoding. ``tests/collectors/kafka/test_fast_offsets.py`` checks them against kafka-python's
own encoder and decoder.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import NamedTuple

from collectors.kafka.fast_wire import (
    INT16,
    INT32,
    array_len,
    compact_string_bytes,
    expect_end,
    nullable_string,
    skip_tags,
    string,
    uvarint_bytes,
)
from collectors.model import CommittedOffset

LIST_OFFSETS_VERSIONS = range(6, 12)  # flexible, leader epoch; v10 adds TimeoutMs to the request
OFFSET_FETCH_VERSIONS = range(8, 10)  # many groups, topics by name (v10 names them by id)

_LO_REQUEST_HEAD = struct.Struct(">ib")  # replica_id, isolation_level
_LO_REQUEST_PARTITION = struct.Struct(">iiqB")  # index, current_leader_epoch, timestamp, no tags
# partition_index, error_code, timestamp, offset, leader_epoch, tag count (0 unless a newer broker adds one)
_LO_PARTITION = struct.Struct(">ihqqiB")
_OF_PARTITION = struct.Struct(">iqi")  # partition_index, committed_offset, committed_leader_epoch

# Per group id: the bytes of its topics array last time, and the offsets decoded from them.
GroupCache = dict[str, tuple[bytes, list[CommittedOffset]]]


class FetchError(NamedTuple):
    """A non-zero error code in an OffsetFetch answer: of the group, or of one of its partitions."""

    error_code: int
    topic: str | None = None
    partition: int | None = None


# ---------------------------------------------------------------- ListOffsets


def list_offsets_request(
    by_topic: Mapping[str, list[int]], timestamp: int, timeout_ms: int, version: int
) -> bytes:
    """The ListOffsets request body for ``timestamp`` of every partition, as kafka-python would encode it."""
    if version not in LIST_OFFSETS_VERSIONS:
        raise ValueError(f"ListOffsets v{version} is not encoded by hand")
    pack = _LO_REQUEST_PARTITION.pack
    out = [_LO_REQUEST_HEAD.pack(-1, 0), uvarint_bytes(len(by_topic) + 1)]
    for name, partitions in by_topic.items():
        out.append(compact_string_bytes(name))
        out.append(uvarint_bytes(len(partitions) + 1))
        out.extend(pack(p, -1, timestamp, 0) for p in partitions)
        out.append(b"\0")  # topic tags
    if version >= 10:
        out.append(INT32.pack(timeout_ms))
    out.append(b"\0")  # request tags
    return b"".join(out)


def list_offsets(
    data: bytes,
) -> tuple[dict[tuple[str, int], tuple[int, int]], list[tuple[str, int, int]]]:
    """``{(topic, partition): (offset, leader_epoch)}`` of the partitions answered without error, and
    ``(topic, partition, error_code)`` of the others (in response order: a later entry wins, as before)."""
    found: dict[tuple[str, int], tuple[int, int]] = {}
    errors: list[tuple[str, int, int]] = []
    unpack = _LO_PARTITION.unpack_from
    n_topics, pos = array_len(data, 4)  # after throttle_time_ms
    for _ in range(n_topics):
        name, pos = string(data, pos)
        n, pos = array_len(data, pos)
        for _ in range(n):
            partition, error_code, _timestamp, offset, epoch, tags = unpack(data, pos)
            pos = pos + 27 if not tags else skip_tags(data, pos + 26)
            if error_code:
                errors.append((name, partition, error_code))
            else:
                found[name, partition] = (offset, epoch)
        pos = pos + 1 if not data[pos] else skip_tags(data, pos)
    expect_end(data, skip_tags(data, pos))
    return found, errors


# ---------------------------------------------------------------- OffsetFetch


def offset_fetch(
    data: bytes, previous: Mapping[str, tuple[bytes, list[CommittedOffset]]]
) -> tuple[dict[str, list[CommittedOffset] | FetchError], GroupCache]:
    """Each group's committed offsets (``>= 0`` only) or its error, and the cache for the next call.

    A group whose topics start with the same bytes as in ``previous`` gets (a copy of) the offsets decoded
    then, without reading them again: idle groups, the ones whose offsets can expire, answer the same bytes
    cycle after cycle. Those bytes were a whole topics array and the format never looks ahead, so the
    same bytes decode to the same values and end at the same place. Only groups without errors are kept.
    """
    result: dict[str, list[CommittedOffset] | FetchError] = {}
    cache: GroupCache = {}
    n_groups, pos = array_len(data, 4)  # after throttle_time_ms
    for _ in range(n_groups):
        group, start = string(data, pos)
        hit = previous.get(group)
        if hit is not None and data.startswith(hit[0], start):
            key: bytes | None = hit[0]
            decoded: list[CommittedOffset] | FetchError = hit[1]
            end = start + len(hit[0])
        else:
            key = None
            decoded, end = _decode_topics(data, start, group)
        error_code = INT16.unpack_from(data, end)[0]
        pos = skip_tags(data, end + 2)
        if error_code:
            result[group] = FetchError(error_code)  # the group's error wins over its partitions'
        elif isinstance(decoded, FetchError):
            result[group] = decoded
        else:
            cache[group] = (data[start:end] if key is None else key, decoded)
            result[group] = list(decoded)  # callers own their list; the cached one stays as decoded
    expect_end(data, skip_tags(data, pos))
    return result, cache


def _decode_topics(data: bytes, pos: int, group: str) -> tuple[list[CommittedOffset] | FetchError, int]:
    """One group's offsets, or the last partition error among them (as the slow path); and where they end."""
    offsets: list[CommittedOffset] = []
    failed: FetchError | None = None
    unpack = _OF_PARTITION.unpack_from
    n_topics, pos = array_len(data, pos)
    for _ in range(n_topics):
        name, pos = string(data, pos)
        n, pos = array_len(data, pos)
        for _ in range(n):
            partition, offset, epoch = unpack(data, pos)
            metadata, pos = nullable_string(data, pos + 16)
            error_code = INT16.unpack_from(data, pos)[0]
            pos = pos + 3 if not data[pos + 2] else skip_tags(data, pos + 2)
            if error_code:
                failed = FetchError(error_code, name, partition)
            elif offset >= 0:
                offsets.append(
                    CommittedOffset(
                        group, name, partition, offset, epoch if epoch >= 0 else None, metadata or ""
                    )
                )
        pos = pos + 1 if not data[pos] else skip_tags(data, pos)
    return (failed if failed is not None else offsets), pos
