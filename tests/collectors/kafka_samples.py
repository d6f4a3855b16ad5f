"""Response bodies encoded by kafka-python itself, for checking the fast decoders against its decoder."""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.consumer import ListOffsetsResponse, OffsetFetchResponse
from kafka.protocol.metadata import MetadataResponse

_LOTopic = ListOffsetsResponse.ListOffsetsTopicResponse
_LOPartition = _LOTopic.ListOffsetsPartitionResponse
_OFGroup = OffsetFetchResponse.OffsetFetchResponseGroup
_OFTopic = _OFGroup.OffsetFetchResponseTopics
_OFPartition = _OFTopic.OffsetFetchResponsePartitions
_MBroker = MetadataResponse.MetadataResponseBroker
_MTopic = MetadataResponse.MetadataResponseTopic
_MPartition = _MTopic.MetadataResponsePartition

# (partition, error_code, offset, leader_epoch)
LOPart = tuple[int, int, int, int]
# (partition, committed_offset, committed_leader_epoch, metadata, error_code)
OFPart = tuple[int, int, int, str | None, int]
# (error_code, partition, leader, leader_epoch, replicas, isr, offline)
MPart = tuple[int, int, int, int, list[int], list[int], list[int]]


def list_offsets(topics: dict[str, list[LOPart]], version: int = 10, throttle: int = 0) -> bytes:
    response = ListOffsetsResponse(
        throttle_time_ms=throttle,
        topics=[
            _LOTopic(
                name=name,
                partitions=[
                    _LOPartition(partition_index=p, error_code=e, timestamp=-1, offset=o, leader_epoch=le)
                    for p, e, o, le in parts
                ],
            )
            for name, parts in topics.items()
        ],
    )
    return bytes(response.encode(version=version))


def offset_fetch(groups: list[tuple[str, int, dict[str, list[OFPart]]]], version: int = 8) -> bytes:
    response = OffsetFetchResponse(
        throttle_time_ms=0,
        groups=[
            _OFGroup(
                group_id=group,
                error_code=error,
                topics=[
                    _OFTopic(
                        name=name,
                        partitions=[
                            _OFPartition(
                                partition_index=p,
                                committed_offset=o,
                                committed_leader_epoch=le,
                                metadata=m,
                                error_code=e,
                            )
                            for p, o, le, m, e in parts
                        ],
                    )
                    for name, parts in topics.items()
                ],
            )
            for group, error, topics in groups
        ],
    )
    return bytes(response.encode(version=version))


def metadata(
    brokers: list[tuple[int, str, int, str | None]],
    topics: list[tuple[int, str, uuid.UUID | None, bool, list[MPart]]],
    *,
    cluster_id: str | None = "cid",
    controller: int = 1,
    version: int = 13,
) -> bytes:
    fields: dict[str, Any] = {"error_code": 0} if version >= 13 else {}
    response = MetadataResponse(
        throttle_time_ms=0,
        brokers=[_MBroker(node_id=n, host=h, port=p, rack=r) for n, h, p, r in brokers],
        cluster_id=cluster_id,
        controller_id=controller,
        topics=[
            _MTopic(
                error_code=error,
                name=name,
                topic_id=tid,
                is_internal=internal,
                partitions=[
                    _MPartition(
                        error_code=e,
                        partition_index=p,
                        leader_id=leader,
                        leader_epoch=epoch,
                        replica_nodes=replicas,
                        isr_nodes=isr,
                        offline_replicas=offline,
                    )
                    for e, p, leader, epoch, replicas, isr, offline in parts
                ],
                authorized_operations=None,  # what brokers send unless asked: -2**31
            )
            for error, name, tid, internal, parts in topics
        ],
        **fields,
    )
    return bytes(response.encode(version=version))


def with_tag(body: bytes, at: int, tag: int = 5, payload: bytes = b"x" * 130) -> bytes:
    """``body`` with the empty tagged-field section at byte ``at`` holding one unknown field instead.

    kafka-python's encoder never writes unknown tags, but a newer broker may; a 130-byte payload makes
    the size a two-byte varint.
    """
    assert body[at] == 0, f"no empty tag section at {at}"
    size = (
        bytes([(len(payload) & 0x7F) | 0x80, len(payload) >> 7])
        if len(payload) > 127
        else bytes([len(payload)])
    )
    return body[:at] + b"\x01" + bytes([tag]) + size + payload + body[at + 1 :]
