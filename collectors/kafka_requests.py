"""The Kafka requests behind :class:`collectors.kafka_seam.KafkaPythonSeam`, as coroutines.

Each function runs on kafka-python's I/O thread (via ``manager.run``), builds protocol requests, sends all
of them before awaiting any (so they are in flight together) and turns responses into seam values.
Per-item broker error codes become typed errors in the result; a failed request raises and is translated
by the seam.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kafka.future import Future
from kafka.protocol.admin import DescribeConfigsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetFetchRequest
from kafka.protocol.metadata import MetadataRequest

from collectors.errors import KafkaError, KafkaUnavailableError
from collectors.kafka_errors import response_error, translate
from collectors.kafka_protocol import (
    CONFIG_SOURCES,
)
from collectors.model import Broker, PartitionInfo, TopicInfo, TopicPartition
from collectors.seam import ConfigValue, MetadataSnapshot, OffsetRange, OffsetsResult

_EARLIEST, _LATEST = -2, -1
_TOPIC, _BROKER = 2, 4  # DescribeConfigs resource types
_NULL_UUID = "00000000-0000-0000-0000-000000000000"
_LOTopic = ListOffsetsRequest.ListOffsetsTopic
_LOPartition = _LOTopic.ListOffsetsPartition
_OFGroup = OffsetFetchRequest.OffsetFetchRequestGroup
_DCResource = DescribeConfigsRequest.DescribeConfigsResource


def send(manager: Any, request: Any, node_id: int | None) -> Any:
    """Queue ``request``; a refusal to even queue (unknown broker id) comes back as a failed future."""
    try:
        return manager.send(request, node_id=node_id)
    except Exception as exc:
        return Future().failure(exc)


async def _settle(future: Any) -> Any:
    """The response, or the exception the request failed with (so siblings still complete)."""
    try:
        return await future
    except Exception as exc:
        return exc


def _error_name(code: int, cluster: str) -> str:
    err = response_error(code, cluster=cluster)
    return str(getattr(err, "error_name", type(err).__name__))


# ---------------------------------------------------------------- metadata


async def metadata(manager: Any, cluster: str) -> MetadataSnapshot:
    """All brokers and topics, asking up to three nodes in turn if one does not answer."""
    last: BaseException | None = None
    for _ in range(3):
        request = MetadataRequest(topics=MetadataRequest.ALL_TOPICS, allow_auto_topic_creation=False)
        response = await _settle(send(manager, request, manager.least_loaded_node()))
        if isinstance(response, BaseException):
            last = response
            continue
        _sync_brokers(manager, response)
        return _snapshot(response, cluster)
    raise last if last is not None else KafkaUnavailableError("no broker to ask", cluster=cluster)


def _sync_brokers(manager: Any, response: Any) -> None:
    """Teach kafka-python's own broker map about added/moved brokers (rare: compare before updating)."""
    known = {(b.node_id, b.host, b.port) for b in manager.cluster.brokers()}
    if known != {(b.node_id, b.host, b.port) for b in response.brokers}:
        manager.cluster.update_metadata(response)


def _snapshot(response: Any, cluster: str) -> MetadataSnapshot:
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
                error=_error_name(p.error_code, cluster) if p.error_code else None,
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


# ---------------------------------------------------------------- log offsets


async def list_offsets(
    manager: Any, cluster: str, leader_id: int, partitions: Sequence[TopicPartition], timeout_ms: int
) -> OffsetsResult:
    """EARLIEST and LATEST (read_uncommitted = high watermark) in two concurrent requests to one leader.

    One request cannot carry both: the broker refuses a partition listed twice.
    """
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in partitions:
        by_topic[topic].append(partition)

    def request(timestamp: int) -> Any:
        topics = [
            _LOTopic(
                name=name, partitions=[_LOPartition(partition_index=p, timestamp=timestamp) for p in parts]
            )
            for name, parts in by_topic.items()
        ]
        return ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics, timeout_ms=timeout_ms)

    sent = [send(manager, request(ts), leader_id) for ts in (_EARLIEST, _LATEST)]
    earliest, latest = [await _settle(f) for f in sent]
    for response in (earliest, latest):
        if isinstance(response, BaseException):
            raise response
    starts, errors = _offsets_by_partition(earliest, cluster)
    ends, end_errors = _offsets_by_partition(latest, cluster)
    errors.update(end_errors)
    ranges: dict[TopicPartition, OffsetRange] = {}
    for tp in partitions:
        if tp in errors:
            continue
        if tp not in starts or tp not in ends:
            errors[tp] = KafkaUnavailableError(
                "leader did not answer for the partition",
                cluster=cluster,
                topic=tp.topic,
                partition=tp.partition,
            )
            continue
        (start, _), (end, epoch) = starts[tp], ends[tp]
        ranges[tp] = OffsetRange(start, end, epoch if epoch >= 0 else None)
    return ranges, errors


def _offsets_by_partition(
    response: Any, cluster: str
) -> tuple[dict[TopicPartition, tuple[int, int]], dict[TopicPartition, KafkaError]]:
    found: dict[TopicPartition, tuple[int, int]] = {}
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


# ---------------------------------------------------------------- configs


def _configs(result: Any) -> dict[str, ConfigValue]:
    return {
        c.name: ConfigValue(c.value, CONFIG_SOURCES.get(c.config_source, "UNKNOWN")) for c in result.configs
    }


async def describe_topic_configs(
    manager: Any, cluster: str, chunks: Sequence[Sequence[str]], keys: Sequence[str]
) -> dict[str, dict[str, ConfigValue] | KafkaError]:
    """DescribeConfigs of topic chunks, one request per chunk, all in flight together."""
    sent = []
    for chunk in chunks:
        resources = [
            _DCResource(resource_type=_TOPIC, resource_name=t, configuration_keys=list(keys)) for t in chunk
        ]
        request = DescribeConfigsRequest(
            resources=resources, include_synonyms=False, include_documentation=False
        )
        sent.append((chunk, send(manager, request, manager.least_loaded_node())))
    found: dict[str, dict[str, ConfigValue] | KafkaError] = {}
    for chunk, future in sent:
        response = await _settle(future)
        if isinstance(response, BaseException):
            err = translate(response, cluster=cluster, what="DescribeConfigs")
            found.update(dict.fromkeys(chunk, err))
            continue
        for r in response.results:
            if r.error_code:
                found[r.resource_name] = response_error(
                    r.error_code, cluster=cluster, topic=r.resource_name, message=r.error_message
                )
            else:
                found[r.resource_name] = _configs(r)
    return found


async def describe_broker_configs(
    manager: Any, cluster: str, broker_id: int, keys: Sequence[str]
) -> dict[str, ConfigValue]:
    """DescribeConfigs of one broker's ``keys``, sent to that broker."""
    resource = _DCResource(resource_type=_BROKER, resource_name=str(broker_id), configuration_keys=list(keys))
    request = DescribeConfigsRequest(
        resources=[resource], include_synonyms=False, include_documentation=False
    )
    response = await send(manager, request, broker_id)
    result = response.results[0]
    if result.error_code:
        raise response_error(result.error_code, cluster=cluster, message=result.error_message)
    return _configs(result)
