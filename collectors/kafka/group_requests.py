"""Group requests behind :class:`collectors.kafka.seam.KafkaPythonSeam` (see :mod:`.requests`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from kafka.protocol.admin import DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata import FindCoordinatorRequest

from collectors.compat import LIST_GROUPS_UNTYPED, Fallbacks
from collectors.errors import KafkaError, KafkaUnavailableError
from collectors.kafka import fast_fallback as fallback
from collectors.kafka import fast_offsets as fast_offsets
from collectors.kafka.errors import response_error
from collectors.kafka.fast_cache import WireCache
from collectors.kafka.fast_io import RawRequest, RawResponse, decode
from collectors.kafka.protocol import ConsumerGroupDescribeRequest, classic_group, consumer_group, group_type
from collectors.kafka.requests import send
from collectors.model import CommittedOffset, GroupInfo
from collectors.seam import ListedGroup

_OFGroup = OffsetFetchRequest.OffsetFetchRequestGroup


# ---------------------------------------------------------------- groups


async def list_groups(
    manager: Any, cluster: str, broker_id: int, fallbacks: Fallbacks | None = None
) -> list[ListedGroup]:
    """ListGroups (v5: with type and state) to one broker: the groups it coordinates. An older answer has
    no type: every group is classic there (counted in ``fallbacks``)."""
    response = await send(manager, ListGroupsRequest(), broker_id)
    if response.error_code:
        raise response_error(response.error_code, cluster=cluster, message=f"ListGroups to {broker_id}")
    version = int(getattr(response, "API_VERSION", 5))
    if version < 5 and fallbacks is not None:
        fallbacks.note(LIST_GROUPS_UNTYPED, f"broker {broker_id} answered ListGroups v{version}")
    return [
        ListedGroup(g.group_id, group_type(g.group_type or ""), g.group_state or "", g.protocol_type or "")
        for g in response.groups
    ]


async def find_coordinators(
    manager: Any, cluster: str, group_ids: Sequence[str]
) -> dict[str, int | KafkaError]:
    """One batched FindCoordinator (v4+, KIP-699) for all ``group_ids``."""
    request = FindCoordinatorRequest(key_type=0, coordinator_keys=list(group_ids), min_version=4)
    response = await send(manager, request, manager.least_loaded_node())
    found: dict[str, int | KafkaError] = {}
    for c in response.coordinators:
        if c.error_code:
            found[c.key] = response_error(c.error_code, cluster=cluster, group=c.key, message=c.error_message)
        else:
            found[c.key] = c.node_id
    return found


async def describe_classic(
    manager: Any, cluster: str, broker_id: int, group_ids: Sequence[str]
) -> dict[str, GroupInfo | KafkaError]:
    """One DescribeGroups for many classic groups on their coordinator."""
    request = DescribeGroupsRequest(groups=list(group_ids), include_authorized_operations=False)
    response = await send(manager, request, broker_id)
    return {
        g.group_id: response_error(g.error_code, cluster=cluster, group=g.group_id)
        if g.error_code
        else classic_group(g, broker_id)
        for g in response.groups
    }


async def describe_consumer(
    manager: Any, cluster: str, broker_id: int, group_ids: Sequence[str]
) -> dict[str, GroupInfo | KafkaError]:
    """One ConsumerGroupDescribe (KIP-848) for many consumer groups on their coordinator."""
    request = ConsumerGroupDescribeRequest(group_ids=list(group_ids), include_authorized_operations=False)
    response = await send(manager, request, broker_id)
    return {
        g.group_id: response_error(g.error_code, cluster=cluster, group=g.group_id, message=g.error_message)
        if g.error_code
        else consumer_group(g, broker_id)
        for g in response.groups
    }


async def fetch_offsets(
    manager: Any, cluster: str, coordinator_id: int, group_ids: Sequence[str], cache: WireCache
) -> dict[str, list[CommittedOffset] | KafkaError]:
    """One OffsetFetch v8 (KIP-709) for many groups; a group or partition error fails only that group."""
    request = OffsetFetchRequest(
        groups=[_OFGroup(group_id=g, topics=None) for g in group_ids],
        require_stable=False,
        min_version=8,
        max_version=8,  # v10 names topics by id only
    )
    raw = await send(manager, RawRequest.wrap(request, OffsetFetchResponse), coordinator_id)

    def fast(raw: RawResponse) -> dict[str, list[CommittedOffset] | KafkaError]:
        decoded, groups = fast_offsets.offset_fetch(raw.body, cache.groups(coordinator_id))
        cache.keep_groups(coordinator_id, groups, whole=len(group_ids) > 1)
        return {
            g: _fetch_error(got, g, cluster) if isinstance(got, fast_offsets.FetchError) else got
            for g, got in decoded.items()
        }

    result = decode(
        raw, fast, partial(fallback.offset_fetch, cluster=cluster), fast_offsets.OFFSET_FETCH_VERSIONS
    )
    for g in group_ids:
        if g not in result:
            result[g] = KafkaUnavailableError(
                "coordinator did not answer for the group", cluster=cluster, group=g
            )
    return result


def _fetch_error(error: fast_offsets.FetchError, group: str, cluster: str) -> KafkaError:
    return response_error(
        error.error_code, cluster=cluster, group=group, topic=error.topic, partition=error.partition
    )
