"""``POST /api/v1/drills`` (write scope): run drills on a configured cluster in the background;
``GET /api/v1/drills[/{id}]``: their progress and results (see ``offsetguard drill`` and docs/drills.md)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from drills.kinds import ALL, SPECS, chosen
from drills.runner import Options
from drills.runs import Busy, DrillRuns
from service.api.deps import ReadAccess, SettingsDep, WriteAccess
from service.api.errors import READ_ERRORS, WRITE_ERRORS, Conflict, InvalidParameter, NotFound

router = APIRouter(prefix="/api/v1/drills", tags=["drills"])
DEFAULTS = Options()


class DrillsIn(BaseModel):
    """Which drills to run (``all``: every kind safe on a live cluster but stall; the kinds that stop
    brokers run only from the CLI on a sandbox) and how long to wait for each alert."""

    kinds: Annotated[list[str], Field(min_length=1, max_length=10)]
    cluster: str | None = Field(default=None, max_length=100)  # default: the first configured
    timeout_seconds: float = Field(default=DEFAULTS.timeout_s, gt=0, le=3600)
    notify_timeout_seconds: float = Field(default=DEFAULTS.notify_timeout_s, ge=0, le=3600)
    lag_messages: int = Field(default=DEFAULTS.lag_messages, ge=1, le=1_000_000)


def _runs(request: Request) -> DrillRuns:
    runs: DrillRuns | None = getattr(request.app.state, "drills", None)
    if runs is None:
        runs = request.app.state.drills = DrillRuns()
    return runs


@router.post("", status_code=202, responses=WRITE_ERRORS)
async def start_drills(
    _: WriteAccess, body: DrillsIn, settings: SettingsDep, request: Request
) -> JSONResponse:
    """Start a run; 202 with its id (poll ``GET /api/v1/drills/{id}``); 409 while another runs."""
    unknown = [k for k in body.kinds if k not in SPECS and k != ALL]
    if unknown:
        raise InvalidParameter(f"unknown drill kind(s) {unknown}: one of {[*SPECS, ALL]}", parameter="kinds")
    kinds = chosen(body.kinds)
    sandbox_only = [k for k in kinds if not SPECS[k].live_safe]
    if sandbox_only:
        raise InvalidParameter(
            f"{sandbox_only} stop brokers: run them with offsetguard drill KIND --sandbox DIR",
            parameter="kinds",
        )
    if body.cluster:
        cluster = settings.cluster(body.cluster)
    else:
        cluster = settings.clusters[0] if settings.clusters else None
    if cluster is None:
        raise NotFound(f"cluster {body.cluster!r} is not configured", code="cluster_not_found")
    options = Options(body.timeout_seconds, body.notify_timeout_seconds, body.lag_messages)
    auth = request.headers.get("authorization")
    headers = {"Authorization": auth} if auth else {}
    try:
        run = _runs(request).start(request.app, asyncio.get_running_loop(), cluster, kinds, options, headers)
    except Busy as exc:
        raise Conflict(str(exc), code="drill_running") from exc
    return JSONResponse(run.as_dict(), status_code=202)


@router.get("", responses=READ_ERRORS)
async def list_drills(_: ReadAccess, request: Request) -> dict[str, Any]:
    """The latest runs, newest first."""
    return {"drills": [r.as_dict() for r in _runs(request).latest()]}


@router.get("/{run_id}", responses=READ_ERRORS)
async def get_drill(_: ReadAccess, run_id: str, request: Request) -> dict[str, Any]:
    run = _runs(request).get(run_id)
    if run is None:
        raise NotFound(f"no drill run {run_id!r}", code="drill_not_found")
    return run.as_dict()
