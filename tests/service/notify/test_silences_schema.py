"""Property-based run of the silence endpoints from /openapi.json: no 5xx, and every response matches
its documented status codes, content types and schemas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from service.app import create_app
from service.runtime import Runtime
from service.settings import load_settings
from service.state import LatestObservations
from store.notifications import NotificationStore
from tests.service.notify.builders import T0

TOKEN = "write-token-0123456789"
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
]


@pytest.fixture(scope="module")
def running_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    directory: Path = tmp_path_factory.mktemp("silences-schema")
    s = load_settings(
        store={"path": str(directory / "og.db")},
        api={"tokens": [{"name": "oncall", "token": TOKEN, "scopes": ["write"]}]},
    )
    notifications = NotificationStore.open(s.store)
    runtime = Runtime(s, store=None, latest=LatestObservations(), jobs=[], notifications=notifications)
    app = create_app(s, runtime_factory=lambda _: runtime, clock=lambda: T0)
    with TestClient(app):
        yield app


def _fuzz(operation: Any, mode: GenerationMode, failures: list[str]) -> int:
    calls = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    def run(case: Any) -> None:
        nonlocal calls
        calls += 1
        try:
            case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{operation.label} [{mode.value}]: {type(exc).__name__}: {exc}"[:2000])

    try:
        run()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
    return calls


def test_silences_openapi_fuzzed_no_server_error_no_violation(running_app: FastAPI) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", running_app)
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # an invalid schema fails the test anyway
        if not operation.path.startswith("/api/v1/silences"):
            continue
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(operation, mode, failures)

    assert operations == 4
    assert not failures, "\n".join(failures[:10])
