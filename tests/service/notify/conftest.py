"""Fixtures for the notification tests: a fresh store file with its alert and notification stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.alerts import AlertStore
from store.notifications import NotificationStore
from store.settings import StoreSettings


@pytest.fixture
def store_settings(tmp_path: Path) -> StoreSettings:
    return StoreSettings(path=tmp_path / "var" / "offsetguard.db")


@pytest.fixture
def alert_store(store_settings: StoreSettings) -> Iterator[AlertStore]:
    with AlertStore.open(store_settings) as opened:
        yield opened


@pytest.fixture
def queue(store_settings: StoreSettings, alert_store: AlertStore) -> Iterator[NotificationStore]:
    with NotificationStore.open(store_settings) as opened:
        yield opened
