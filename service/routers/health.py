"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    ready: bool
    stale: list[str]
    reasons: list[str] = []  # why not ready: "stale:<cluster>:<collector>", "tail:<cluster> catching up"
    collectors: list[dict[str, Any]]
    tail: list[dict[str, Any]] = []  # each cluster's __consumer_offsets tail figures
    fallbacks: list[dict[str, Any]] = []  # Kafka APIs a cluster's brokers lack, what is done instead
    # per cluster: the scope's patterns and how many groups and topics it left out in the last cycle
    scope: list[dict[str, Any]] = []
    # the store's writes: healthy, write_failures, dropped_rows, reason, failing_since (None: no store)
    store: dict[str, Any] | None = None
    # ha on (issue 46): this replica's role ("active" or "standby": a standby is ready, it serves the API
    # and /metrics from the shared store), its id, the lease's holder and epoch as last read; None: ha off
    leader: dict[str, Any] | None = None
    # per cluster with a tail: whether the committed offsets come from the tail or a poll, and the
    # reconciling polls' runs and differences (collectors.reconcile)
    reconcile: list[dict[str, Any]] = []


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and its event loop answers."""
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(request: Request) -> JSONResponse:
    """Ready when every collector has succeeded recently and every tail caught up; else 503 with reasons."""
    runtime = request.app.state.runtime
    now = request.app.state.clock()
    readiness = runtime.readiness(now)
    body = Readiness(**readiness).model_dump()
    return JSONResponse(body, status_code=200 if readiness["ready"] else 503)
