"""Property-based run over /openapi.json: no 5xx, and every response matches the documented status codes,
content types and schemas. In-process over ASGI with a bounded number of examples per operation."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from collectors.snapshots import SnapshotCounts, SnapshotInfo, SnapshotResult
from service.api.deps import snapshot_taker
from service.app import create_app
from tests.service.api.builders import NOW, T0, WRITE_TOKEN, build, settings_for

MAX_EXAMPLES = 20
OURS = "/api/v1/"
NOT_OURS = "/api/v1/silences"  # notifications: tested with their own module
KNOWN = {"cluster": "prod", "group": "orders-app", "topic": "orders", "alert_id": "al-lag"}
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.response_headers_conformance,
]


def _fake_taker(*args: Any) -> SnapshotResult:
    info = SnapshotInfo("20231114T221500000Z-00000001", "prod", "g", 1, "manual", T0, "/x", 0, 1, 2, 3, "ab")
    return SnapshotResult(info, SnapshotCounts(total=2), 0, 2, ())


@pytest.fixture(scope="module")
def running_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    settings = settings_for(tmp_path_factory.mktemp("schemathesis"))
    runtime = build(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    app.dependency_overrides[snapshot_taker] = lambda: _fake_taker
    with TestClient(app):  # runs the lifespan: app.state.runtime is set until the module ends
        yield app


@dataclass
class Stats:
    calls: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    no_negative: list[str] = field(default_factory=list)


def _fuzz(operation: Any, mode: GenerationMode, stats: Stats, known: dict[str, str] | None = None) -> None:
    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=known))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    def run(case: Any) -> None:
        stats.calls[operation.label] += 1
        try:
            response = case.call_and_validate(
                headers={"Authorization": f"Bearer {WRITE_TOKEN}"}, checks=CHECKS
            )
        except (Exception, BaseExceptionGroup) as exc:  # collected, reported below one line each
            stats.failures.append(f"{operation.label} [{mode.value}]: {type(exc).__name__}: {exc}"[:2000])
            return
        stats.statuses[response.status_code] += 1

    try:
        run()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        stats.no_negative.append(operation.label)  # nothing to make invalid (no parameters)


def test_api_openapi_schema_no_server_error_no_violation(running_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", running_app)
    stats = Stats()
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith(OURS) or operation.path.startswith(NOT_OURS):
            continue
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(operation, mode, stats)
        # Again with names that exist, so query parameters reach the handlers rather than a 404.
        names = {p.name for p in operation.path_parameters}
        known = {k: v for k, v in KNOWN.items() if k in names}
        if known:
            _fuzz(operation, GenerationMode.POSITIVE, stats, known)
    elapsed = time.monotonic() - started
    print(f"schemathesis: {sum(stats.calls.values())} calls, {len(stats.calls)} operations, {elapsed:.1f} s;")
    print(f"statuses {dict(sorted(stats.statuses.items()))}")
    assert len(stats.calls) >= 15
    assert not stats.failures, "\n".join(stats.failures[:20])
    assert not [s for s in stats.statuses if s >= 500]


def test_openapi_document_lists_every_contract_path(running_app: FastAPI, tmp_path: Path) -> None:
    paths = set(running_app.openapi()["paths"])
    assert {
        "/api/v1/alerts",
        "/api/v1/alerts/{alert_id}",
        "/api/v1/alerts/{alert_id}/ack",
        "/api/v1/clusters",
        "/api/v1/clusters/{cluster}/groups",
        "/api/v1/clusters/{cluster}/groups/{group}",
        "/api/v1/clusters/{cluster}/groups/{group}/history",
        "/api/v1/clusters/{cluster}/groups/{group}/offsets-at",
        "/api/v1/clusters/{cluster}/groups/{group}/reset-plan",
        "/api/v1/clusters/{cluster}/topics/{topic}/partitions",
        "/api/v1/clusters/{cluster}/audit",
        "/api/v1/snapshots",
        "/api/v1/snapshots/{snapshot_id}",
        "/api/v1/snapshots/{snapshot_id}/download",
        "/api/v1/clusters/{cluster}/groups/{group}/snapshots",
    } <= paths
