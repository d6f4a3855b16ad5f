"""``/api/v1/alerts``: list (filters, newest first, cursor pages), one alert with its history, ack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from service.api.deps import AlertsDep, NowDep, ReadAccess, RuntimeDep, SettingsDep, WriteAccess
from service.api.errors import READ_ERRORS, WRITE_ERRORS, NotFound
from service.api.paths import unescape
from service.api.responses import json_response
from service.api.schemas.alerts import (
    AckRequest,
    AlertDetail,
    AlertOut,
    AlertPageOut,
    NotificationOut,
    TransitionOut,
)
from service.api.times import TIME_HELP, parse_time
from service.api.unstored import first_page, unstored
from store.alert_records import Alert, Transition
from store.alerts import MAX_PAGE

router = APIRouter(prefix="/api/v1/alerts", tags=["alerts"])


async def since_param(
    since: Annotated[
        str | None, Query(description=f"Alerts updated at or after this time: {TIME_HELP}")
    ] = None,
) -> float | None:
    return None if since is None else parse_time(since, "since")


@router.get("", response_model=AlertPageOut, responses=READ_ERRORS)
async def list_alerts(
    _: ReadAccess,
    alerts: AlertsDep,
    settings: SettingsDep,
    runtime: RuntimeDep,
    since: Annotated[float | None, Depends(since_param)],
    status: Literal["firing", "resolved"] | None = None,
    kind: Annotated[str | None, Query(max_length=200)] = None,
    severity: Literal["info", "warning", "critical"] | None = None,
    cluster: Annotated[str | None, Query(max_length=200)] = None,
    group: Annotated[str | None, Query(max_length=1000)] = None,
    topic: Annotated[str | None, Query(max_length=300)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    cursor: Annotated[
        str | None, Query(pattern=r"^[0-9]{1,18}$", description="next_cursor of a page")
    ] = None,
) -> Response:
    """Alerts matching every given filter, newest first."""
    # On the event loop, not the thread pool: one indexed read on a WAL reader connection (no lock
    # shared with writers) costs less than the two hops to a worker thread and back.
    page = alerts.list(
        status=status,
        kind=kind,
        severity=severity,
        cluster=cluster,
        group=group,
        topic=topic,
        since=since,
        limit=limit,
        cursor=cursor,
    )
    wanted: dict[str, Any] = {"status": status, "kind": kind, "severity": severity, "cluster": cluster}
    wanted |= {"group": group, "topic": topic, "since": since}
    shown: Sequence[Alert] = page.alerts
    if cursor is None and (kept := unstored(runtime)):  # the store refuses writes: memory's alerts too
        shown = first_page(page.alerts, kept, wanted, limit)
    base = settings.api.runbook_base_url
    out = AlertPageOut(alerts=[AlertOut.of(a, base) for a in shown], next_cursor=page.next_cursor)
    return json_response(out)


@router.get("/{alert_id}", response_model=AlertDetail, responses=READ_ERRORS)
def get_alert(
    _: ReadAccess, alerts: AlertsDep, settings: SettingsDep, runtime: RuntimeDep, alert_id: str
) -> AlertDetail:
    """One alert with its history (fired, repeated, acked, resolved, ...) and the notifications sent of it
    (to each receiver: pending, delivered, ...), oldest first."""
    alert_id = unescape(alert_id)
    alert = alerts.get(alert_id)
    kept = {a.id: (a, ts) for a, ts in unstored(runtime)}
    if alert is None and alert_id not in kept:
        raise NotFound(f"no alert {alert_id!r}", code="alert_not_found")
    stored: Sequence[Transition] = alerts.transitions(alert_id) if alert is not None else ()
    if alert_id in kept:  # the store refuses writes: the alert as it stands in memory, its newer history
        alert, newer = kept[alert_id]
        stored = (*stored, *newer)
    assert alert is not None
    out = AlertOut.of(alert, settings.api.runbook_base_url)
    transitions = [TransitionOut.of(t) for t in stored]
    queue = getattr(runtime, "notifications", None)
    sent = [] if queue is None else [NotificationOut.of(n) for n in queue.notifications(alert_id=alert_id)]
    return AlertDetail(**out.model_dump(), transitions=transitions, notifications=sent)


@router.post("/{alert_id}/ack", response_model=AlertOut, responses=WRITE_ERRORS)
def ack_alert(
    principal: WriteAccess,
    alerts: AlertsDep,
    settings: SettingsDep,
    now: NowDep,
    alert_id: str,
    body: AckRequest,
) -> AlertOut:
    """Acknowledge: an event-like alert (rewind, skip, ...) resolves; a state-like one fires until clear."""
    who = body.who or principal.name or "unknown"
    alert_id = unescape(alert_id)
    alert = alerts.ack(alert_id, who, body.comment, now)
    if alert is None:
        raise NotFound(f"no alert {alert_id!r}", code="alert_not_found")
    return AlertOut.of(alert, settings.api.runbook_base_url)
