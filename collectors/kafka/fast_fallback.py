"""Seam values from kafka-python's decoded response objects: the path when a fast decoder declines.

:func:`collectors.kafka.fast_io.decode` hands these kafka-python's object for any response version the
hand-written decoders (:mod:`collectors.kafka.fast_offsets`, :mod:`collectors.kafka.fast_metadata`) do
not read, or whose bytes they refuse. They return exactly what the fast decoders return.
"""

from __future__ import annotations

from typing import Any

from collectors.errors import KafkaError
from collectors.kafka.errors import response_error
from collectors.kafka.fast_metadata import error_name
from collectors.model import Broker, CommittedOffset, PartitionInfo, TopicInfo, TopicPartition
from collectors.seam import MetadataSnapshot

_NULL_UUID = "00000000-0000-0000-0000-000000000000"

# ``{(topic, partition): (offset, leader_epoch)}`` answered without error, and the per-partition errors
ListedOffsets = tuple[dict[tuple[str, int], tuple[int, int]], dict[TopicPartition, KafkaError]]


def snapshot(response: Any, cluster: str) -> MetadataSnapshot:
    """A Metadata response as a snapshot: topics by name, partitions by index, empty errored topics out."""
    topics = []
    for t in response.topics:
        if t.error_code != 0 and not t.partitions:
            continue
        partitions = tuple(
            PartitionInfo(
                topic=t.name,
                partition=p.partition_index,
                leader=p.leader_id if p.leader_id >= 0 else None,
                leader_epoch=p.leader_epoch,
                replicas=tuple(p.replica_nodes),
                isr=tuple(p.isr_nodes),
                offline_replicas=tuple(p.offline_replicas or ()),
                error=error_name(p.error_code, cluster) if p.error_code else None,
            )
            for p in sorted(t.partitions, key=lambda p: p.partition_index)
        )
        topic_id = str(t.topic_id) if t.topic_id is not None else None
        topics.append(
            TopicInfo(t.name, bool(t.is_internal), partitions, None if topic_id == _NULL_UUID else topic_id)
        )
    controller = response.controller_id
    return MetadataSnapshot(
        cluster_id=response.cluster_id,
        controller_id=controller if controller is not None and controller >= 0 else None,
        brokers=tuple(
            sorted((Broker(b.node_id, b.host, b.port, b.rack) for b in response.brokers), key=_node)
        ),
        topics=tuple(sorted(topics, key=lambda t: t.name)),
    )


def _node(broker: Broker) -> int:
    return broker.node_id


def list_offsets(response: Any, cluster: str) -> ListedOffsets:
    """A ListOffsets response's offsets and errors (a later entry for a partition wins)."""
    found: dict[tuple[str, int], tuple[int, int]] = {}
    errors: dict[TopicPartition, KafkaError] = {}
    for t in response.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if p.error_code:
                errors[tp] = response_error(
                    p.error_code, cluster=cluster, topic=t.name, partition=tp.partition
                )
            else:
                found[tp] = (p.offset, p.leader_epoch)
    return found, errors


def offset_fetch(response: Any, cluster: str) -> dict[str, list[CommittedOffset] | KafkaError]:
    """Each group's committed offsets (``>= 0`` only), or its error: the last partition error if any."""
    result: dict[str, list[CommittedOffset] | KafkaError] = {}
    for g in response.groups:
        if g.error_code:
            result[g.group_id] = response_error(g.error_code, cluster=cluster, group=g.group_id)
            continue
        offsets: list[CommittedOffset] = []
        failed: KafkaError | None = None
        for t in g.topics:
            for p in t.partitions:
                if p.error_code:
                    failed = response_error(
                        p.error_code,
                        cluster=cluster,
                        group=g.group_id,
                        topic=t.name,
                        partition=p.partition_index,
                    )
                elif p.committed_offset >= 0:
                    epoch = p.committed_leader_epoch
                    offsets.append(
                        CommittedOffset(
                            g.group_id,
                            t.name,
                            p.partition_index,
                            p.committed_offset,
                            epoch if epoch >= 0 else None,
                            p.metadata or "",
                        )
                    )
        result[g.group_id] = failed if failed is not None else offsets
    return result
