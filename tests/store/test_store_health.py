"""A disk that refuses writes (SQLITE_FULL through a tiny ``max_page_count``, SQLITE_READONLY through
``query_only``): typed errors, the store's health, what is counted, and recovery once space returns."""

from __future__ import annotations

import errno
import logging
import sqlite3
from pathlib import Path

import pytest

from collectors.errors import StoreCorruptError, StoreError, StoreWriteError
from store import Store
from store.alerts import AlertStore
from store.db import translated
from store.health import StoreHealth
from store.opening import open_migrated
from store.settings import StoreSettings
from tests.alerts.builders import offsets
from tests.service.notify.builders import T0, alert, fire

TOPIC = "orders"


def _cap(conn: sqlite3.Connection) -> int:
    """Let the database grow no further (SQLITE_FULL on the next page it needs); the old cap."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    old = conn.execute("PRAGMA max_page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    return int(old)


def _many(at: float, n: int = 3000, end: int = 100) -> dict[tuple[str, int], tuple[int, int]]:
    return {(TOPIC, p): (0, end + p) for p in range(n)}


@pytest.mark.sqlite_only
def test_sqlite_store_history_write_disk_full_fails_typed_counts_and_recovers(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    store.health.settle_seconds = 0.0  # healthy at the first write that commits
    old = _cap(store._writer)  # the seam: the store's own writer connection, capped at its size

    with caplog.at_level(logging.ERROR, logger="store.health"), pytest.raises(StoreWriteError) as info:
        store.record_offsets(offsets(T0, _many(T0)))
    with pytest.raises(StoreWriteError):
        store.record_offsets(offsets(T0 + 1, _many(T0 + 1)))

    assert info.value.code == "SQLITE_FULL"
    view = store.health.view()
    assert (view.healthy, view.write_failures) == (False, 2)
    assert view.dropped_rows == 2 * 3000
    assert view.reason is not None and view.reason.startswith("SQLITE_FULL")
    assert len([r for r in caplog.records if r.name == "store.health"]) == 1  # once per spell, not per row

    store._writer.execute(f"PRAGMA max_page_count = {old}")  # space returns
    counts = store.record_offsets(offsets(T0 + 2, _many(T0 + 2, end=200)))

    assert store.health.view().healthy
    assert (counts.new_keys, counts.history_rows) == (3000, 3000)  # the newest values, in one write
    assert {p.log_end for p in store.latest_partitions("c", TOPIC) if p.partition == 0} == {200}


def test_sqlite_alert_store_readonly_write_fails_typed_and_marks_failing(tmp_path: Path) -> None:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        alerts.health.settle_seconds = 0.0
        alerts._conn.execute("PRAGMA query_only = ON")  # the seam: its writer refuses like a read-only file

        with pytest.raises(StoreWriteError) as info:
            fire(alerts, alert())

        assert info.value.code == "SQLITE_READONLY"
        assert not alerts.health.healthy
        assert alerts.firing("prod") == ()  # reads go on

        alerts._conn.execute("PRAGMA query_only = OFF")
        fire(alerts, alert())
        assert alerts.health.healthy
        assert [a.id for a in alerts.firing("prod")] == ["al-1"]


def test_alert_store_read_failure_not_counted_as_write_failure(tmp_path: Path) -> None:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        with pytest.raises(StoreError):
            alerts.list(limit=0)
        assert alerts.health.view().write_failures == 0


def test_sqlite_open_migrated_garbage_file_names_file_and_recovery(tmp_path: Path) -> None:
    path = tmp_path / "og.db"
    path.write_bytes(b"not a database at all " * 500)

    with pytest.raises(StoreCorruptError) as info:
        open_migrated(path, "store")

    message = str(info.value)
    assert info.value.path == str(path)
    assert f"the store file {path} is damaged or not a SQLite database" in message
    assert f"restore {path} from a backup" in message
    assert f"mv {path} {path}.corrupt" in message
    assert "offsetguard store check" in message
    assert path.read_bytes().startswith(b"not a database")  # left as it was


def test_sqlite_store_open_garbage_file_is_store_corrupt_error(tmp_path: Path) -> None:
    path = tmp_path / "og.db"
    path.write_bytes(b"\x00garbage" * 1000)

    with pytest.raises(StoreCorruptError):
        Store.open(StoreSettings(path=path))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_store_health_flapping_writes_stay_failing_until_settled(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    health = StoreHealth("og.db", settle_seconds=10.0, clock=clock)
    full = StoreWriteError("record offsets failed: database or disk is full", code="SQLITE_FULL")

    with caplog.at_level(logging.INFO, logger="store.health"):
        for t in range(5):  # a full disk: small writes fit in the file's pages between refused ones
            clock.now = float(t)
            health.failed(full)
            clock.now = t + 0.5
            health.succeeded()
        during = health.view()
        clock.now = 14.0  # 10 s after the last refusal
        health.succeeded()

    assert (during.healthy, during.write_failures, during.failing_since) == (False, 5, 0.0)
    assert health.healthy
    assert [r.levelname for r in caplog.records] == ["ERROR", "WARNING"]  # one line each way


def _sqlite_error(code: int, text: str) -> sqlite3.Error:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code
    return exc


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (_sqlite_error(13, "database or disk is full"), "SQLITE_FULL"),
        (_sqlite_error(8, "attempt to write a readonly database"), "SQLITE_READONLY"),
        (_sqlite_error(10 | (4 << 8), "disk I/O error"), "SQLITE_IOERR"),  # an extended IOERR code
        (_sqlite_error(14, "unable to open database file"), "SQLITE_CANTOPEN"),
        (OSError(errno.ENOSPC, "No space left on device"), "ENOSPC"),
        (OSError(errno.EROFS, "Read-only file system"), "EROFS"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_translated_disk_failures_are_store_write_errors(raised: Exception, code: str) -> None:
    with pytest.raises(StoreWriteError) as info, translated("write"):
        raise raised
    assert info.value.code == code


def test_translated_other_errors_stay_store_errors() -> None:
    with pytest.raises(StoreError) as busy, translated("write"):
        raise _sqlite_error(5, "database is locked")
    with pytest.raises(StoreCorruptError), translated("read"):
        raise _sqlite_error(11, "database disk image is malformed")
    assert type(busy.value) is StoreError
