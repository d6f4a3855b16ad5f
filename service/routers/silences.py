"""Silences: ``POST/GET /api/v1/silences``, ``GET/DELETE /api/v1/silences/{id}``.

A silence holds back notifications of the alerts its matchers select (Alertmanager-style ``=``, ``!=``,
``=~``, ``!~`` on kind, cluster, group, topic) between ``starts_at`` and ``ends_at``; the alerts are still
recorded. DELETE expires a silence (it stays listed as expired); an alert still firing then is notified.
Writes need the ``write`` scope.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, Field

from service.api.deps import NowDep, ReadAccess, RuntimeDep, WriteAccess
from service.api.errors import READ_ERRORS, WRITE_ERRORS, InvalidParameter, NotFound, Unavailable
from service.api.times import TIME_HELP, parse_time
from service.notify.silencing import check_matcher
from store.notification_records import Matcher, Silence
from store.notifications import NotificationStore

router = APIRouter(prefix="/api/v1/silences", tags=["silences"])

MAX_MATCHERS = 20
SilenceStatus = Literal["pending", "active", "expired"]


class MatcherBody(BaseModel):
    """``name op value``: ``=`` / ``!=`` exact, ``=~`` / ``!~`` a regex matching the whole label."""

    name: Literal["kind", "cluster", "group", "topic"]
    op: Literal["=", "!=", "=~", "!~"] = "="
    value: str = Field(max_length=1000)


class SilenceIn(BaseModel):
    """A new silence. ``starts_at`` defaults to now; times are RFC 3339 or epoch seconds."""

    matchers: list[MatcherBody] = Field(min_length=1, max_length=MAX_MATCHERS)
    starts_at: float | str | None = Field(default=None, description=TIME_HELP)
    ends_at: float | str = Field(description=TIME_HELP)
    comment: str = Field(min_length=1, max_length=2000)
    created_by: str | None = Field(default=None, min_length=1, max_length=200)  # default: the token name


class SilenceOut(BaseModel):
    id: str
    matchers: list[MatcherBody]
    starts_at: float
    ends_at: float
    comment: str
    created_by: str
    created_at: float
    updated_at: float
    status: SilenceStatus

    @classmethod
    def of(cls, s: Silence, now: float) -> SilenceOut:
        return cls(
            id=s.id,
            matchers=[MatcherBody(name=m.name, op=m.op, value=m.value) for m in s.matchers],  # type: ignore[arg-type]
            starts_at=s.starts_at,
            ends_at=s.ends_at,
            comment=s.comment,
            created_by=s.created_by,
            created_at=s.created_at,
            updated_at=s.updated_at,
            status=s.status(now),  # type: ignore[arg-type]
        )


class SilenceListOut(BaseModel):
    """Newest first."""

    silences: list[SilenceOut]


async def get_notifications(runtime: RuntimeDep) -> NotificationStore:
    store: NotificationStore | None = getattr(runtime, "notifications", None)
    if store is None:
        raise Unavailable("notifications are disabled (notify.enabled)", code="notifications_unavailable")
    return store


NotificationsDep = Annotated[NotificationStore, Depends(get_notifications)]


def _time(value: float | str, parameter: str) -> float:
    return parse_time(str(value), parameter)


@router.post("", status_code=201, response_model=SilenceOut, responses=WRITE_ERRORS)
async def create_silence(
    body: SilenceIn, store: NotificationsDep, now: NowDep, who: WriteAccess
) -> SilenceOut:
    """Silence the alerts every matcher selects, from ``starts_at`` (default now) to ``ends_at``."""
    matchers = tuple(Matcher(m.name, m.op, m.value) for m in body.matchers)
    for n, m in enumerate(matchers):
        try:
            check_matcher(m)
        except ValueError as exc:
            raise InvalidParameter(str(exc), parameter=f"matchers.{n}.value") from exc
    starts = now if body.starts_at is None else _time(body.starts_at, "starts_at")
    ends = _time(body.ends_at, "ends_at")
    if ends <= starts:
        raise InvalidParameter("ends_at must be after starts_at", parameter="ends_at")
    if ends <= now:
        raise InvalidParameter("ends_at is in the past: the silence would never hold", parameter="ends_at")
    created_by = body.created_by or who.name or "anonymous"
    silence = Silence(
        f"si-{int(now * 1000):013d}-{secrets.token_hex(4)}",
        matchers,
        starts,
        ends,
        body.comment,
        created_by,
        now,
        now,
    )
    await asyncio.to_thread(store.add_silence, silence)
    return SilenceOut.of(silence, now)


@router.get("", response_model=SilenceListOut, responses=READ_ERRORS)
async def list_silences(
    store: NotificationsDep,
    now: NowDep,
    _: ReadAccess,
    status: Annotated[SilenceStatus | None, Query(description="Only silences in this state")] = None,
) -> SilenceListOut:
    """Every silence, or those ``pending``, ``active`` or ``expired`` now."""
    found = await asyncio.to_thread(store.silences)
    return SilenceListOut(
        silences=[SilenceOut.of(s, now) for s in found if status is None or s.status(now) == status]
    )


@router.get("/{silence_id}", response_model=SilenceOut, responses=READ_ERRORS)
async def get_silence(silence_id: str, store: NotificationsDep, now: NowDep, _: ReadAccess) -> SilenceOut:
    found = await asyncio.to_thread(store.silence, silence_id)
    if found is None:
        raise NotFound(f"unknown silence {silence_id!r}", code="silence_not_found")
    return SilenceOut.of(found, now)


@router.delete("/{silence_id}", status_code=204, response_class=Response, responses=WRITE_ERRORS)
async def expire_silence(
    silence_id: str, store: NotificationsDep, runtime: RuntimeDep, now: NowDep, _: WriteAccess
) -> Response:
    """Expire the silence now (expiring an expired one changes nothing); its alerts are notified again."""
    found = await asyncio.to_thread(store.expire_silence, silence_id, now)
    if found is None:
        raise NotFound(f"unknown silence {silence_id!r}", code="silence_not_found")
    notifier = getattr(runtime, "notifier", None)
    if notifier is not None:
        notifier.wake()  # alerts the silence held back and still firing are notified now
    return Response(status_code=204)
