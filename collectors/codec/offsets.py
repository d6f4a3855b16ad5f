"""Offset commits: OffsetCommitKey (types 0 and 1) and OffsetCommitValue v0–v4+.

Value layouts (from OffsetCommitValue.json): v0 offset, metadata, commitTimestamp; v1 adds
expireTimestamp; v2 drops it; v3 adds leaderEpoch after offset; v4 is the first flexible version
(compact metadata, tagged fields with TopicId as tag 0). KIP-915 promises later versions only add
tagged fields, so any version >= 4 is read with the v4 layout and unknown tags are skipped.

:func:`decode_commit` is the hot path: type-1 key + v3/v4 value with precompiled structs and no
Reader. Anything it does not expect falls back to the general Reader path, which also produces the
precise error message when the bytes are corrupt.
"""

from __future__ import annotations

import struct
import sys

from collectors.codec.records import OffsetCommit, OffsetCommitTombstone
from collectors.codec.wire import MAX_STRING, Reader, topic_id_str

_KEY_HEAD = struct.Struct(">hh")  # record type, group length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_V3_HEAD = struct.Struct(">hqih")  # version, offset, leaderEpoch, metadata length
_V4_HEAD = struct.Struct(">hqi")  # version, offset, leaderEpoch
_TOPIC_ID_TAG = 0
_ONLY_TOPIC_ID = b"\x01\x00\x10"  # one tagged field, tag 0, 16 bytes long


def decode_key(reader: Reader) -> tuple[str, str, int]:
    """Group, topic and partition of an offset key (after the record type)."""
    return reader.string(), reader.string(), reader.int32()


def decode_tombstone(record_type: int, reader: Reader) -> OffsetCommitTombstone:
    group, topic, partition = decode_key(reader)
    return OffsetCommitTombstone(record_type, group, topic, partition)


def decode_value(
    record_type: int, group: str, topic: str, partition: int, version: int, value: bytes
) -> OffsetCommit:
    """Any known value version (``version`` >= 0 already read from the first two bytes)."""
    flexible = version >= 4
    r = Reader(value, 2, flexible=flexible)
    offset = r.int64()
    leader_epoch: int | None = None
    if version >= 3:
        leader_epoch = r.int32()
        if leader_epoch == -1:
            leader_epoch = None
    metadata = r.string()
    commit_timestamp = r.int64()
    expire_timestamp = r.int64() if version == 1 else None
    topic_id = None
    if flexible:
        raw_id = r.tagged_fields().get(_TOPIC_ID_TAG)
        if raw_id is not None:
            if len(raw_id) != 16:
                raise r.error(f"TopicId tag of {len(raw_id)} bytes, expected 16")
            topic_id = topic_id_str(raw_id)
    return OffsetCommit(
        record_type,
        group,
        topic,
        partition,
        version,
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
        expire_timestamp,
        topic_id,
    )


def decode_commit(key: bytes, value: bytes) -> OffsetCommit | None:
    """Fast path for a type-1 key with a v3/v4 value (TopicId tag at most); None means "use the general path".

    Any exception here also means "use the general path": it re-reads the bytes and raises the
    precise error. Bounds need no explicit checks: each position only grows, so a short slice always
    makes the next ``unpack_from`` fail.
    """
    _, glen = _KEY_HEAD.unpack_from(key)
    if glen < 0 or glen > MAX_STRING:
        return None
    pos = 4 + glen
    group = sys.intern(key[4:pos].decode())  # names repeat in every commit: one copy each
    (tlen,) = _I16.unpack_from(key, pos)
    if tlen < 0:
        return None
    pos += 2
    topic = sys.intern(key[pos : pos + tlen].decode())
    (partition,) = _I32.unpack_from(key, pos + tlen)

    version = value[1] if value[0] == 0 else -1
    topic_id = None
    if version == 3:
        _, offset, epoch, mlen = _V3_HEAD.unpack_from(value)
        if mlen < 0:
            return None
        metadata = value[16 : 16 + mlen].decode()
        (commit_ts,) = _I64.unpack_from(value, 16 + mlen)
    elif version == 4:
        _, offset, epoch = _V4_HEAD.unpack_from(value)
        mlen = value[14]
        start = 15
        if mlen & 0x80:
            # 127+ bytes take a two-byte varint (Burrow reads one byte here and breaks).
            high = value[15]
            if high & 0x80:
                return None
            mlen = (mlen & 0x7F | high << 7) - 1
            start = 16
            if mlen > MAX_STRING:
                return None
        else:
            mlen -= 1
            if mlen < 0:
                return None
        metadata = value[start : start + mlen].decode()
        (commit_ts,) = _I64.unpack_from(value, start + mlen)
        tags = start + 8 + mlen
        if value[tags] != 0:
            # Kafka 4.1 writes exactly one tag: TopicId (tag 0, 16 bytes); anything else is slow path.
            if value[tags : tags + 3] != _ONLY_TOPIC_ID or len(value) < tags + 19:
                return None
            topic_id = topic_id_str(value[tags + 3 : tags + 19])
    else:
        return None
    return OffsetCommit(
        1,
        group,
        topic,
        partition,
        version,
        offset,
        None if epoch == -1 else epoch,
        metadata,
        commit_ts,
        None,
        topic_id,
    )
