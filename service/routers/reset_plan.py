"""``GET /api/v1/clusters/{cluster}/groups/{group}/reset-plan``: restore the offsets committed at a time
with Kafka's ``kafka-consumer-groups --reset-offsets --from-file`` (see service.api.reset_plan)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query
from fastapi.responses import PlainTextResponse

from collectors.model import GroupsObservation
from service.api import reset_plan as plans
from service.api.deps import ClusterName, GroupName, ReadAccess, RuntimeDep, SettingsDep, StoreDep
from service.api.errors import READ_ERRORS, NotFound, as_json
from service.api.groups import LogRanges, committed_or_404, find_group
from service.routers.groups import Time

router = APIRouter(prefix="/api/v1/clusters/{cluster}/groups", tags=["groups"])

CSV_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/csv": {"schema": {"type": "string"}}},
        "description": "The plan as CSV: topic,partition,offset lines (format=kafka), or the same with a"
        " warning column and # comments holding the command line (format=annotated)",
    }
}


@router.get(
    "/{group}/reset-plan",
    response_class=PlainTextResponse,
    responses={**as_json(READ_ERRORS), **CSV_RESPONSE},
)
def reset_plan(
    _: ReadAccess,
    cluster: ClusterName,
    group: GroupName,
    runtime: RuntimeDep,
    settings: SettingsDep,
    store: StoreDep,
    time: Time,
    format: Annotated[
        plans.PlanFormat,
        Query(description="annotated (for people, refused by Kafka) or kafka (apply with --from-file)"),
    ] = "annotated",
) -> PlainTextResponse:
    """The offsets committed at ``time``, clamped into each partition's current log range."""
    committed_now = committed_or_404(
        store, cluster, group, find_group(runtime.latest.get(cluster, GroupsObservation), group)
    )
    then = store.committed_at(cluster, group, time)
    if not then:
        raise NotFound(f"group {group!r} had no committed offsets at that time", code="no_offsets_at_time")
    ranges = LogRanges(store, cluster)
    plan = plans.build_plan(
        cluster,
        group,
        time,
        then,
        [(c.topic, c.partition, c.offset) for c in committed_now if c.offset is not None],
        ranges.get,
        settings.cluster(cluster),
    )
    filename = quote(f"reset-plan-{cluster}-{group}.csv", safe="")
    return PlainTextResponse(
        plans.render(plan, format),
        media_type="text/csv",
        headers={
            "Content-Disposition": f"attachment; filename=reset-plan.csv; filename*=UTF-8''{filename}",
            "X-Offsetguard-Warnings": str(plan.warnings),
        },
    )
