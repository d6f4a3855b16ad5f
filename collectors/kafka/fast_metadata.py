"""Hand-written Metadata (v12-13) decoder that reuses the topics whose bytes did not change.

A cluster's metadata changes rarely (a leader moves, an ISR shrinks), yet the response is the largest a
cycle parses after ListOffsets. Each topic's bytes are compared with the previous answer's and an
unchanged topic keeps its previous :class:`TopicInfo` (immutable, so sharing it is safe), without being
read again; only changed topics are decoded. Raises :data:`collectors.kafka.fast_wire.FAST_DECODE_ERRORS`
on anything unexpected so :func:`collectors.kafka.fast_io.decode` falls back to kafka-python.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from operator import attrgetter

from collectors.kafka.errors import response_error
from collectors.kafka.fast_wire import (
    Malformed,
    array_len,
    expect_end,
    int32,
    int32_array,
    nullable_string,
    skip_tags,
    string,
    topic_id,
)
from collectors.model import Broker, PartitionInfo, TopicInfo
from collectors.seam import MetadataSnapshot

METADATA_VERSIONS = range(12, 14)  # v13 only adds the top-level ErrorCode

# error_code, partition_index, leader_id, leader_epoch
_PARTITION = struct.Struct(">hiii")
_TOPIC_HEAD = struct.Struct(">h")
_by_partition = attrgetter("partition")
_by_name = attrgetter("name")
_by_node = attrgetter("node_id")

# Per topic name: the bytes of the topic last time and what they decoded to (None: the topic was skipped).
TopicCache = dict[str, tuple[bytes, TopicInfo | None]]


def error_name(code: int, cluster: str) -> str:
    """The broker's name of a partition error code, e.g. ``LEADER_NOT_AVAILABLE``."""
    err = response_error(code, cluster=cluster)
    return str(getattr(err, "error_name", type(err).__name__))


def metadata(
    data: bytes, version: int, cluster: str, previous: Mapping[str, tuple[bytes, TopicInfo | None]]
) -> tuple[MetadataSnapshot, TopicCache]:
    """The snapshot :func:`collectors.kafka.requests.metadata` builds, and the topic cache for next time."""
    n, pos = array_len(data, 4)  # after throttle_time_ms
    brokers = []
    for _ in range(n):
        node_id, pos = int32(data, pos)
        host, pos = string(data, pos)
        port, pos = int32(data, pos)
        rack, pos = nullable_string(data, pos)
        pos = skip_tags(data, pos)
        brokers.append(Broker(node_id, host, port, rack))
    cluster_id, pos = nullable_string(data, pos)
    controller, pos = int32(data, pos)
    n, pos = array_len(data, pos)
    topics: list[TopicInfo] = []
    cache: TopicCache = {}
    for _ in range(n):
        start = pos
        error_code = _TOPIC_HEAD.unpack_from(data, pos)[0]
        name, pos = nullable_string(data, pos + 2)
        if name is None:  # only when asked by topic id, which we never do: leave it to the slow path
            raise Malformed("topic without a name")
        hit = previous.get(name)
        if hit is not None and data.startswith(hit[0], start):
            # The same bytes decode to the same topic and end at the same place (no look-ahead).
            key, info = hit
            end = start + len(key)
        else:
            tid, pos = topic_id(data, pos)
            internal = bool(data[pos])
            partitions, end = _decode_partitions(data, pos + 1, name, cluster)
            skip = error_code != 0 and not partitions  # as the slow path: an errored topic with nothing
            info = None if skip else TopicInfo(name, internal, partitions, tid)
            key = data[start:end]
        pos = skip_tags(data, end + 4)  # after topic_authorized_operations
        cache[name] = (key, info)
        if info is not None:
            topics.append(info)
    if version >= 13:
        pos += 2  # top-level error_code, ignored as the slow path ignores it
    expect_end(data, skip_tags(data, pos))
    topics.sort(key=_by_name)
    brokers.sort(key=_by_node)
    snapshot = MetadataSnapshot(
        cluster_id=cluster_id,
        controller_id=controller if controller >= 0 else None,
        brokers=tuple(brokers),
        topics=tuple(topics),
    )
    return snapshot, cache


def _decode_partitions(
    data: bytes, pos: int, topic: str, cluster: str
) -> tuple[tuple[PartitionInfo, ...], int]:
    """One topic's partitions as :class:`PartitionInfo`, sorted by partition index; and where they end."""
    found = []
    unpack = _PARTITION.unpack_from
    n, pos = array_len(data, pos)
    for _ in range(n):
        error_code, index, leader, epoch = unpack(data, pos)
        replicas, pos = int32_array(data, pos + 14)
        isr, pos = int32_array(data, pos)
        offline, pos = int32_array(data, pos)
        pos = pos + 1 if not data[pos] else skip_tags(data, pos)
        found.append(
            PartitionInfo(
                topic=topic,
                partition=index,
                leader=leader if leader >= 0 else None,
                leader_epoch=epoch,
                replicas=replicas,
                isr=isr,
                offline_replicas=offline,
                error=error_name(error_code, cluster) if error_code else None,
            )
        )
    found.sort(key=_by_partition)
    return tuple(found), pos
