"""Fixtures for the store tests: a fresh database file per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store import Store
from store.settings import StoreSettings


@pytest.fixture
def settings(tmp_path: Path) -> StoreSettings:
    return StoreSettings(path=tmp_path / "var" / "offsetguard.db")


@pytest.fixture
def store(settings: StoreSettings) -> Iterator[Store]:
    with Store.open(settings) as opened:
        yield opened
