"""Failures surface as StoreError, with the sqlite3/OS exception kept on ``__cause__``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import psycopg
import pytest

from collectors.errors import StoreError
from collectors.model import CommittedObservation
from store import Store, db
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def test_sqlite_open_parent_is_a_file_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(StoreError) as caught:
        Store.open(StoreSettings(path=tmp_path / "file" / "sub" / "x.db"))
    assert isinstance(caught.value.__cause__, OSError)


def test_sqlite_open_path_is_a_directory_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "x.db").mkdir()
    with pytest.raises(StoreError) as caught:
        Store.open(StoreSettings(path=tmp_path / "x.db"))
    assert isinstance(caught.value.__cause__, sqlite3.Error)


def test_sqlite_open_not_a_database_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "x.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError) as caught:
        Store.open(StoreSettings(path=tmp_path / "x.db"))
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_store_after_close_raises_store_error(settings: StoreSettings) -> None:
    store = Store.open(settings)
    store.groups("c1")  # this thread now has a reader connection
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.groups("c1")
    with pytest.raises(StoreError, match="closed"):
        store.record_committed(CommittedObservation("c1", T0, (), ("g",)))


def test_store_locked_database_raises_store_error_with_cluster(
    settings: StoreSettings,
    monkeypatch: pytest.MonkeyPatch,
    hold_write_lock: Callable[[], AbstractContextManager[None]],
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 20)
    with Store.open(settings) as store, hold_write_lock(), pytest.raises(StoreError) as caught:
        store.set_tail_position("c9", 0, 1, T0)
    assert caught.value.cluster == "c9"
    assert type(caught.value) is StoreError  # busy, not a refused write: the store is not failing
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError | psycopg.errors.LockNotAvailable)


def test_store_context_manager_closes_on_exit(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        pass
    with pytest.raises(StoreError):
        store.clusters()
