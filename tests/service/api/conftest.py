"""A client of the app over the literal data of :mod:`tests.service.api.builders` (no Kafka)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.settings import Settings
from tests.service.api.builders import NOW, WRITE_TOKEN, build, settings_for


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return settings_for(tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    runtime = build(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    with TestClient(app) as test_client:
        yield test_client


WRITE = {"Authorization": f"Bearer {WRITE_TOKEN}"}
