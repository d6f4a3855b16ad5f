"""The Kafka requests behind :class:`collectors.kafka.seam.KafkaPythonSeam`, as coroutines.

Each function runs on kafka-python's I/O thread (via ``manager.run``), builds protocol requests, sends all
of them before awaiting any (so they are in flight together) and turns responses into seam values.
Per-item broker error codes become typed errors in the result; a failed request raises and is translated
by the seam.

The three answers that grow with the cluster (Metadata, ListOffsets, OffsetFetch) come back undecoded
(:mod:`collectors.kafka.fast_io`) and are read by hand-written decoders, with kafka-python's decoder as
the fallback (:mod:`collectors.kafka.fast_fallback`); the seam's :class:`WireCache` keeps what did not
change since the previous cycle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from itertools import compress
from operator import ne
from typing import Any

from kafka.future import Future
from kafka.protocol.admin import DescribeConfigsRequest
from kafka.protocol.consumer import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from collectors.errors import KafkaError, KafkaUnavailableError
from collectors.kafka import fast_fallback as fallback
from collectors.kafka import fast_metadata as fast_metadata
from collectors.kafka import fast_offsets as fast_offsets
from collectors.kafka.errors import response_error, translate
from collectors.kafka.fast_cache import Listed, WireCache
from collectors.kafka.fast_fallback import ListedOffsets
from collectors.kafka.fast_io import RawRequest, RawResponse, decode
from collectors.kafka.protocol import CONFIG_SOURCES
from collectors.model import TopicPartition
from collectors.seam import ConfigValue, EpochEndResult, MetadataSnapshot, OffsetRange, OffsetsResult

_EARLIEST, _LATEST = -2, -1
_range = tuple.__new__  # an OffsetRange from its three values in one C call (its __new__ is Python)
_TOPIC, _BROKER = 2, 4  # DescribeConfigs resource types
_LOTopic = ListOffsetsRequest.ListOffsetsTopic
_LOPartition = _LOTopic.ListOffsetsPartition
_DCResource = DescribeConfigsRequest.DescribeConfigsResource
_OFLTopic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
_OFLPartition = _OFLTopic.OffsetForLeaderPartition


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


# ---------------------------------------------------------------- metadata


async def metadata(manager: Any, cluster: str, cache: WireCache | None = None) -> MetadataSnapshot:
    """All brokers and topics, asking up to three nodes in turn if one does not answer.

    ``cache`` (the seam's) lets topics whose bytes did not change keep their previous :class:`TopicInfo`.
    """
    cache = WireCache() if cache is None else cache
    last: BaseException | None = None
    for _ in range(3):
        request = MetadataRequest(topics=MetadataRequest.ALL_TOPICS, allow_auto_topic_creation=False)
        raw = await _settle(
            send(manager, RawRequest.wrap(request, MetadataResponse), manager.least_loaded_node())
        )
        if isinstance(raw, BaseException):
            last = raw
            continue
        return decode(
            raw,
            partial(_fast_snapshot, manager, cluster, cache),
            partial(_slow_snapshot, manager, cluster),
            fast_metadata.METADATA_VERSIONS,
        )
    raise last if last is not None else KafkaUnavailableError("no broker to ask", cluster=cluster)


def _fast_snapshot(manager: Any, cluster: str, cache: WireCache, raw: RawResponse) -> MetadataSnapshot:
    snapshot, cache.topics = fast_metadata.metadata(raw.body, raw.version, cluster, cache.topics)
    if _brokers_moved(manager, snapshot.brokers):  # kafka-python's broker map wants its own object
        manager.cluster.update_metadata(raw.response_class.decode(raw.body))
    return snapshot


async def topic_errors(manager: Any, cluster: str, names: Sequence[str]) -> dict[str, KafkaError | None]:
    """Metadata for ``names`` only: None for a topic this principal may describe, else its error.

    Asked by name, Kafka says what an all-topics Metadata keeps silent: TOPIC_AUTHORIZATION_FAILED for a
    topic without DESCRIBE (left out of the full answer), UNKNOWN_TOPIC_OR_PARTITION for one that is gone.
    """
    topics = [MetadataRequest.MetadataRequestTopic(name=n, topic_id=None) for n in names]
    request = MetadataRequest(topics=topics, allow_auto_topic_creation=False)
    response = await send(manager, request, manager.least_loaded_node())
    found: dict[str, KafkaError | None] = {}
    for t in response.topics:
        found[t.name] = response_error(t.error_code, cluster=cluster, topic=t.name) if t.error_code else None
    return found


def _slow_snapshot(manager: Any, cluster: str, response: Any) -> MetadataSnapshot:
    if _brokers_moved(manager, response.brokers):
        manager.cluster.update_metadata(response)
    return fallback.snapshot(response, cluster)


def _brokers_moved(manager: Any, brokers: Any) -> bool:
    """Whether kafka-python's own broker map lacks added/moved brokers (rare: compare before updating)."""
    known = {(b.node_id, b.host, b.port) for b in manager.cluster.brokers()}
    return known != {(b.node_id, b.host, b.port) for b in brokers}


# ---------------------------------------------------------------- log offsets


async def list_offsets(
    manager: Any,
    cluster: str,
    leader_id: int,
    partitions: Sequence[TopicPartition],
    timeout_ms: int,
    cache: WireCache | None = None,
) -> OffsetsResult:
    """EARLIEST and LATEST (read_uncommitted = high watermark) in two concurrent requests to one leader.

    One request cannot carry both: the broker refuses a partition listed twice. The bodies are encoded
    once per partition set and version (see :class:`WireCache`), the answers decoded by hand.
    """
    key = tuple(partitions)
    wire = WireCache() if cache is None else cache

    def request(timestamp: int) -> RawRequest:
        def body(version: int) -> bytes:
            return wire.list_offsets_body(
                leader_id,
                timestamp,
                key,
                timeout_ms,
                version,
                lambda: _list_offsets_body(key, timestamp, timeout_ms, version),
            )

        return RawRequest(ListOffsetsRequest, ListOffsetsResponse, body)

    sent = [send(manager, request(ts), leader_id) for ts in (_EARLIEST, _LATEST)]
    earliest, latest = [await _settle(f) for f in sent]
    for response in (earliest, latest):
        if isinstance(response, BaseException):
            raise response
    starts, errors = _listed(wire, leader_id, _EARLIEST, earliest, cluster)
    ends, end_errors = _listed(wire, leader_id, _LATEST, latest, cluster)
    errors.update(end_errors)
    if not errors and (ranges := _moved(wire, leader_id, key, starts, ends)) is not None:
        return ranges, errors
    ranges = {}
    for tp, start, end in zip(key, map(starts.get, key), map(ends.get, key), strict=True):
        if errors and tp in errors:
            continue
        if start is None or end is None:
            errors[tp] = KafkaUnavailableError(
                "leader did not answer for the partition",
                cluster=cluster,
                topic=tp.topic,
                partition=tp.partition,
            )
            continue
        ranges[tp] = _offset_range(start, end)
    if not errors and len(starts) == len(ends) == len(ranges):  # exactly the partitions asked
        wire.keep_ranges(leader_id, (key, starts, ends, ranges))
    return ranges, errors


def _offset_range(start: tuple[int, int], end: tuple[int, int]) -> OffsetRange:
    """A partition's range from its (offset, leader epoch) start and end answers; epoch -1 is unknown."""
    return _range(OffsetRange, (start[0], end[0], end[1] if end[1] >= 0 else None))


def _moved(
    wire: WireCache, leader: int, key: tuple[TopicPartition, ...], starts: Listed, ends: Listed
) -> dict[TopicPartition, OffsetRange] | None:
    """The ranges of the leader's last complete answers, for the same partitions, with those whose start
    or end changed since replaced; None when not known that way (another partition set, or an answer
    listing its partitions otherwise than the last). An answer lists them in the order asked, so the
    changed ones are found by comparing the two answers entry by entry, in C: a cycle moves a few of a
    leader's thousands, and the whole merge walked all of them in Python."""
    held = wire.ranges(leader)
    if held is None or held[0] is not key:
        return None
    _, was_starts, was_ends, was = held
    changed: set[tuple[str, int]] = set()
    for now, then in ((starts, was_starts), (ends, was_ends)):
        if now is not then:  # the same bytes decode to the same object (WireCache.listed)
            if len(now) != len(then) or any(map(ne, now, then)):
                return None
            changed.update(compress(now, map(ne, now.values(), then.values())))
    ranges = dict(was)  # a copy: the held ranges are what the last call returned
    for k in changed:
        # the dict keeps its key, the asked TopicPartition (an equal one replaces only the value)
        ranges[TopicPartition(*k)] = _offset_range(starts[k], ends[k])
    wire.keep_ranges(leader, (key, starts, ends, ranges))
    return ranges


def _list_offsets_body(
    partitions: Sequence[TopicPartition], timestamp: int, timeout_ms: int, version: int
) -> bytes:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in partitions:
        by_topic[topic].append(partition)
    if version in fast_offsets.LIST_OFFSETS_VERSIONS:
        return fast_offsets.list_offsets_request(by_topic, timestamp, timeout_ms, version)
    topics = [
        _LOTopic(name=name, partitions=[_LOPartition(partition_index=p, timestamp=timestamp) for p in parts])
        for name, parts in by_topic.items()
    ]
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics, timeout_ms=timeout_ms)
    return bytes(request.encode(version=version))


def _listed(
    wire: WireCache, leader: int, timestamp: int, raw: RawResponse, cluster: str
) -> tuple[Listed, dict[TopicPartition, KafkaError]]:
    """:func:`_offsets` of ``raw``, or the offsets decoded from the same bytes last time (no errors)."""
    hit = wire.listed(leader, timestamp, raw.version, raw.body)
    if hit is not None:
        return hit, {}
    found, errors = _offsets(raw, cluster)
    if not errors:
        wire.keep_listed(leader, timestamp, raw.version, raw.body, found)
    return found, errors


def _offsets(raw: RawResponse, cluster: str) -> ListedOffsets:
    """``{(topic, partition): (offset, leader_epoch)}`` and the per-partition errors of one answer."""

    def fast(raw: RawResponse) -> ListedOffsets:
        found, failed = fast_offsets.list_offsets(raw.body)
        errors: dict[TopicPartition, KafkaError] = {}
        for topic, partition, code in failed:
            errors[TopicPartition(topic, partition)] = response_error(
                code, cluster=cluster, topic=topic, partition=partition
            )
        return found, errors

    return decode(
        raw,
        fast,
        partial(fallback.list_offsets, cluster=cluster),
        fast_offsets.LIST_OFFSETS_VERSIONS,
    )


# ---------------------------------------------------------------- leader epochs


async def offsets_for_leader_epoch(
    manager: Any, cluster: str, leader_id: int, requests: Sequence[tuple[TopicPartition, int]]
) -> EpochEndResult:
    """KIP-320: where each requested leader epoch ends on ``leader_id``, in one OffsetForLeaderEpoch.

    Sent as a consumer (replica id -1) without fencing (current leader epoch -1): the answer is the
    largest epoch <= the requested one the leader knows and the end offset of it (-1/-1 when unknown).
    """
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for (topic, partition), epoch in requests:
        by_topic[topic].append((partition, epoch))
    topics = [
        _OFLTopic(
            topic=name,
            partitions=[
                _OFLPartition(partition=p, current_leader_epoch=-1, leader_epoch=e) for p, e in parts
            ],
        )
        for name, parts in by_topic.items()
    ]
    request = OffsetForLeaderEpochRequest(replica_id=-1, topics=topics)
    response = await send(manager, request, leader_id)
    found: EpochEndResult = {}
    for t in response.topics:
        for r in t.partitions:
            tp = TopicPartition(t.topic, r.partition)
            if r.error_code:
                found[tp] = response_error(
                    r.error_code, cluster=cluster, topic=t.topic, partition=r.partition
                )
            else:
                found[tp] = (r.leader_epoch, r.end_offset)
    return found


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
