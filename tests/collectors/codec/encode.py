"""A small encoder of ``__consumer_offsets`` records, for tests only.

Written from the schemas in kafka-group-coordinator-4.1.2.jar (``common/message/*Key.json`` and
``*Value.json``) and kafka-clients (ConsumerProtocol*.json), independently of the decoder.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def string(s: str | None, flexible: bool = False) -> bytes:
    """Nullable/non-nullable string; compact (uvarint len+1) when flexible."""
    if s is None:
        return uvarint(0) if flexible else i16(-1)
    raw = s.encode()
    return (uvarint(len(raw) + 1) if flexible else i16(len(raw))) + raw


def blob(b: bytes | None, flexible: bool = False) -> bytes:
    if b is None:
        return uvarint(0) if flexible else i32(-1)
    return (uvarint(len(b) + 1) if flexible else i32(len(b))) + b


def array(items: Sequence[bytes], flexible: bool = False) -> bytes:
    return (uvarint(len(items) + 1) if flexible else i32(len(items))) + b"".join(items)


def int32s(values: Sequence[int], flexible: bool = False) -> bytes:
    return array([i32(v) for v in values], flexible)


def strings(values: Sequence[str], flexible: bool = False) -> bytes:
    return array([string(v, flexible) for v in values], flexible)


def tags(fields: dict[int, bytes] | None = None) -> bytes:
    fields = fields or {}
    return uvarint(len(fields)) + b"".join(
        uvarint(tag) + uvarint(len(data)) + data for tag, data in sorted(fields.items())
    )


# ---------------------------------------------------------------- keys


def offset_key(group: str, topic: str, partition: int, record_type: int = 1) -> bytes:
    return i16(record_type) + string(group) + string(topic) + i32(partition)


def group_key(record_type: int, group: str, second: str | None = None) -> bytes:
    """Keys of types 2–24: GroupId, then MemberId or RegularExpression for some types."""
    return i16(record_type) + string(group) + (string(second) if second is not None else b"")


# ---------------------------------------------------------------- OffsetCommitValue


def offset_value(
    version: int,
    offset: int,
    metadata: str = "",
    commit_timestamp: int = 0,
    *,
    leader_epoch: int = -1,
    expire_timestamp: int = -1,
    topic_id: bytes | None = None,
    extra_tags: dict[int, bytes] | None = None,
) -> bytes:
    flexible = version >= 4
    out = i16(version) + i64(offset)
    if version >= 3:
        out += i32(leader_epoch)
    out += string(metadata, flexible) + i64(commit_timestamp)
    if version == 1:
        out += i64(expire_timestamp)
    if flexible:
        fields = dict(extra_tags or {})
        if topic_id is not None:
            fields[0] = topic_id
        out += tags(fields)
    return out


# ---------------------------------------------------------------- GroupMetadataValue + consumer protocol


@dataclass
class Member:
    member_id: str
    client_id: str = "client"
    client_host: str = "/127.0.0.1"
    session_timeout: int = 45000
    subscription: bytes = b""
    assignment: bytes = b""
    group_instance_id: str | None = None
    rebalance_timeout: int = 300000


@dataclass
class Group:
    protocol_type: str = "consumer"
    generation: int = 1
    protocol: str | None = "range"
    leader: str | None = None
    current_state_timestamp: int = -1
    members: list[Member] = field(default_factory=list)


def member(m: Member, version: int) -> bytes:
    flexible = version >= 4
    out = string(m.member_id, flexible)
    if version >= 3:
        out += string(m.group_instance_id, flexible)
    out += string(m.client_id, flexible) + string(m.client_host, flexible)
    if version >= 1:
        out += i32(m.rebalance_timeout)
    out += i32(m.session_timeout) + blob(m.subscription, flexible) + blob(m.assignment, flexible)
    return out + (tags() if flexible else b"")


def group_value(version: int, g: Group) -> bytes:
    flexible = version >= 4
    out = i16(version) + string(g.protocol_type, flexible) + i32(g.generation)
    out += string(g.protocol, flexible) + string(g.leader, flexible)
    if version >= 2:
        out += i64(g.current_state_timestamp)
    out += array([member(m, version) for m in g.members], flexible)
    return out + (tags() if flexible else b"")


def topic_partitions(items: Sequence[tuple[str, Sequence[int]]]) -> bytes:
    return array([string(t) + int32s(ps) for t, ps in items])


def subscription(
    version: int,
    topics: Sequence[str],
    user_data: bytes | None = None,
    owned: Sequence[tuple[str, Sequence[int]]] = (),
    generation_id: int = -1,
    rack_id: str | None = None,
) -> bytes:
    out = i16(version) + strings(topics) + blob(user_data)
    if version >= 1:
        out += topic_partitions(owned)
    if version >= 2:
        out += i32(generation_id)
    if version >= 3:
        out += string(rack_id)
    return out


def assignment(
    version: int, partitions: Sequence[tuple[str, Sequence[int]]], user_data: bytes | None = None
) -> bytes:
    return i16(version) + topic_partitions(partitions) + blob(user_data)


# ---------------------------------------------------------------- KIP-848 values (flexible from v0)


def topic_id_partitions(items: Sequence[tuple[bytes, Sequence[int]]]) -> bytes:
    return array([tid + int32s(ps, True) + tags() for tid, ps in items], True)


def cg_metadata_value(epoch: int, metadata_hash: int | None = None, version: int = 0) -> bytes:
    return i16(version) + i32(epoch) + tags({0: i64(metadata_hash)} if metadata_hash is not None else None)


def cg_partition_metadata_value(
    topics: Sequence[tuple[bytes, str, int, Sequence[tuple[int, Sequence[str]]]]],
) -> bytes:
    items = [
        tid
        + string(name, True)
        + i32(n)
        + array([i32(p) + strings(racks, True) + tags() for p, racks in parts], True)
        + tags()
        for tid, name, n, parts in topics
    ]
    return i16(0) + array(items, True) + tags()


def cg_member_metadata_value(
    *,
    instance_id: str | None,
    rack_id: str | None,
    client_id: str,
    client_host: str,
    topics: Sequence[str],
    regex: str | None,
    rebalance_timeout_ms: int,
    server_assignor: str | None,
    classic: tuple[int, Sequence[tuple[str, bytes]]] | None = None,
) -> bytes:
    out = i16(0) + string(instance_id, True) + string(rack_id, True) + string(client_id, True)
    out += string(client_host, True) + strings(topics, True) + string(regex, True)
    out += i32(rebalance_timeout_ms) + string(server_assignor, True)
    fields = None
    if classic is not None:
        session, protocols = classic
        protos = array([string(n, True) + blob(m, True) + tags() for n, m in protocols], True)
        fields = {0: uvarint(1) + i32(session) + protos + tags()}
    return out + tags(fields)


def cg_target_assignment_metadata_value(epoch: int) -> bytes:
    return i16(0) + i32(epoch) + tags()


def cg_target_assignment_member_value(items: Sequence[tuple[bytes, Sequence[int]]]) -> bytes:
    return i16(0) + topic_id_partitions(items) + tags()


def cg_current_member_assignment_value(
    member_epoch: int,
    previous_member_epoch: int,
    state: int,
    assigned: Sequence[tuple[bytes, Sequence[int]]],
    pending: Sequence[tuple[bytes, Sequence[int]]],
) -> bytes:
    out = i16(0) + i32(member_epoch) + i32(previous_member_epoch) + i8(state)
    return out + topic_id_partitions(assigned) + topic_id_partitions(pending) + tags()


def cg_regex_value(topics: Sequence[str], version: int, timestamp: int) -> bytes:
    return i16(0) + strings(topics, True) + i64(version) + i64(timestamp) + tags()
