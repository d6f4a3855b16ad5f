"""``/api/v1/clusters/{cluster}/groups``: the groups of a cluster, one group, its history and the offsets
it had committed at a moment. Group ids are one percent-encoded path segment (see service.api.paths)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from collectors.model import CommittedObservation, GroupsObservation
from service.api import groups as views
from service.api.deps import ClusterName, GroupName, NowDep, ReadAccess, RuntimeDep, StoreDep
from service.api.errors import READ_ERRORS, InvalidParameter
from service.api.responses import json_response
from service.api.schemas.groups import GroupDetail, GroupHistory, GroupList, OffsetsAt
from service.api.times import TIME_HELP, parse_time
from store.alert_records import Alert

router = APIRouter(prefix="/api/v1/clusters/{cluster}/groups", tags=["groups"])


async def since_param(
    since: Annotated[str | None, Query(description=f"From: {TIME_HELP}")] = None,
) -> float | None:
    return None if since is None else parse_time(since, "since")


async def until_param(
    until: Annotated[str | None, Query(description=f"To: {TIME_HELP}")] = None,
) -> float | None:
    return None if until is None else parse_time(until, "until")


async def time_param(time: Annotated[str, Query(description=f"The moment: {TIME_HELP}")]) -> float:
    return parse_time(time, "time")


Since = Annotated[float | None, Depends(since_param)]
Until = Annotated[float | None, Depends(until_param)]
Time = Annotated[float, Depends(time_param)]


@router.get("", response_model=GroupList, responses=READ_ERRORS)
def list_groups(
    _: ReadAccess,
    cluster: ClusterName,
    runtime: RuntimeDep,
    store: StoreDep,
    now: NowDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(max_length=1000, description="next_cursor of a page")] = None,
    search: Annotated[
        str | None, Query(max_length=200, description="only group ids containing this (any case)")
    ] = None,
) -> GroupList:
    """Groups by id: state, lag summary and the worst firing alert of each."""
    alerts = runtime.alerts

    def firing_of(page: list[str]) -> tuple[Alert, ...]:
        return alerts.firing_of_groups(cluster, page) if alerts is not None else ()

    groups = runtime.latest.get(cluster, GroupsObservation)
    scope = runtime.scope(cluster)
    return views.group_list(
        store, firing_of, groups, cluster, limit=limit, cursor=cursor, now=now, search=search, scope=scope
    )


@router.get("/{group}", response_model=GroupDetail, responses=READ_ERRORS)
async def get_group(
    _: ReadAccess, cluster: ClusterName, group: GroupName, runtime: RuntimeDep, store: StoreDep, now: NowDep
) -> Response:
    """State, type, members and, per committed partition, offset, epoch, log range, lag and last commit."""
    # On the event loop: a few indexed reads on this thread's WAL reader (well under a millisecond)
    # cost less than the hop to the thread pool and back, which dominated this route.
    groups = runtime.latest.get(cluster, GroupsObservation)
    committed = runtime.latest.get(cluster, CommittedObservation)
    scope = runtime.scope(cluster)
    return json_response(views.group_detail(store, groups, cluster, group, now, committed, scope))


@router.get("/{group}/history", response_model=GroupHistory, responses=READ_ERRORS)
def group_history(
    _: ReadAccess,
    cluster: ClusterName,
    group: GroupName,
    runtime: RuntimeDep,
    store: StoreDep,
    since: Since,
    until: Until,
    topic: Annotated[str | None, Query(max_length=300)] = None,
    partition: Annotated[int | None, Query(ge=0, le=2**31 - 1)] = None,
) -> GroupHistory:
    """Committed offsets over time beside the log start/end of the same partitions (changes only)."""
    if since is not None and until is not None and until < since:
        raise InvalidParameter("until is before since", parameter="until")
    return views.group_history(
        store,
        runtime.latest.get(cluster, GroupsObservation),
        cluster,
        group,
        topic=topic,
        partition=partition,
        since=since,
        until=until,
        scope=runtime.scope(cluster),
    )


@router.get("/{group}/offsets-at", response_model=OffsetsAt, responses=READ_ERRORS)
def offsets_at(
    _: ReadAccess, cluster: ClusterName, group: GroupName, runtime: RuntimeDep, store: StoreDep, time: Time
) -> OffsetsAt:
    """What the group had committed at ``time`` (as far as the stored history tells)."""
    return views.offsets_at(store, runtime.latest.get(cluster, GroupsObservation), cluster, group, time)
