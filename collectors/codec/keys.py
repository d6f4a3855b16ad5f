"""The names a ``__consumer_offsets`` key carries, read without its value.

Every key starts with its record type and the group id; offset commit keys (types 0 and 1) go on with
the topic and partition. Readers that drop the records of groups or topics out of scope
(:class:`collectors.scope.Scope`) read these first and never decode the value of a dropped record.
"""

from __future__ import annotations

import struct

from collectors.codec.record_types import (
    GROUP_METADATA,
    LEGACY_OFFSET_COMMIT,
    OFFSET_COMMIT,
    SHARE_GROUP_TYPES,
    STREAMS_GROUP_TYPES,
)

_HEAD = struct.Struct(">hh")  # record type, group length
_LEN = struct.Struct(">h")
# Every type from classic group metadata to the last streams group record is keyed by the group id first.
_GROUP_KEYED = frozenset(range(GROUP_METADATA, max(STREAMS_GROUP_TYPES) + 1)) | SHARE_GROUP_TYPES


def key_names(key: bytes) -> tuple[str, str | None] | None:
    """``(group, topic)`` of an offset commit key, ``(group, None)`` of a group record's key; None for an
    unknown record type or a key too short or malformed to tell (the full decode reports it)."""
    try:
        record_type, glen = _HEAD.unpack_from(key)
        end = 4 + glen
        if glen < 0 or len(key) < end:
            return None
        group = key[4:end].decode()
        if record_type != OFFSET_COMMIT and record_type != LEGACY_OFFSET_COMMIT:
            return (group, None) if record_type in _GROUP_KEYED else None
        (tlen,) = _LEN.unpack_from(key, end)
        start = end + 2
        if tlen < 0 or len(key) < start + tlen:
            return None
        return group, key[start : start + tlen].decode()
    except (struct.error, UnicodeDecodeError):
        return None
