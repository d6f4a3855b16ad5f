"""Schema versions: fresh databases, reopening, upgrading old ones and refusing newer ones."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

import psycopg
import pytest

from collectors.errors import StoreError
from collectors.model import CommittedObservation, CommittedOffset
from store import Store, db
from store.db import Connection, connect_to
from store.migrations import MIGRATIONS, Migration, migrate, schema_version, sql
from store.opening import open_migrated
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def _conn(settings: StoreSettings) -> Connection:
    if settings.url is None:
        settings.path.parent.mkdir(parents=True, exist_ok=True)
    return connect_to(settings)


def tables(settings: StoreSettings) -> set[str]:
    with contextlib.closing(_conn(settings)) as conn:
        if conn.dialect.postgresql:
            sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        else:
            sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        return {row[0] for row in conn.execute(sql)}


def version(settings: StoreSettings) -> int:
    with contextlib.closing(_conn(settings)) as conn:
        return schema_version(conn)


def test_open_fresh_database_creates_latest_schema(settings: StoreSettings) -> None:
    Store.open(settings).close()
    assert version(settings) == len(MIGRATIONS)
    assert {"latest_committed", "committed_history", "tail_positions", "alerts"} <= tables(settings)


def test_sqlite_open_fresh_file_creates_parent_dirs(sqlite_settings: StoreSettings) -> None:
    assert not sqlite_settings.path.parent.exists()
    Store.open(sqlite_settings).close()
    assert sqlite_settings.path.is_file()


def test_sqlite_connect_writer_sets_wal_normal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.db")
    try:
        pragma = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }
    finally:
        conn.close()
    # synchronous 1 = NORMAL
    assert pragma == {
        "journal_mode": "wal",
        "synchronous": 1,
        "foreign_keys": 1,
        "busy_timeout": db.BUSY_TIMEOUT_MS,
    }


def test_connect_reader_refuses_writes(settings: StoreSettings) -> None:
    Store.open(settings).close()
    reader = connect_to(settings, readonly=True)
    try:
        with pytest.raises((sqlite3.OperationalError, psycopg.errors.ReadOnlySqlTransaction)):
            reader.execute("DELETE FROM tail_positions")
    finally:
        reader.close()


def test_open_existing_database_keeps_data_without_remigrating(settings: StoreSettings) -> None:
    observation = CommittedObservation("c1", T0, (CommittedOffset("g", "t", 0, 5, None),), ("g",))
    with Store.open(settings) as store:
        store.record_committed(observation)
    with Store.open(settings) as store:
        assert [p.offset for p in store.latest_committed("c1", "g")] == [5]
    assert version(settings) == len(MIGRATIONS)


def test_open_version_1_database_migrates_and_keeps_history(settings: StoreSettings) -> None:
    with contextlib.closing(_conn(settings)) as conn:
        assert migrate(conn, MIGRATIONS[:1]) == 1
        conn.execute("INSERT INTO latest_committed VALUES (1, 'c1', 'g', 't', 0, 42, 3, '', ?, ?)", (T0, T0))
        conn.execute("INSERT INTO committed_history VALUES (1, ?, 42, 3, '')", (T0,))
    with Store.open(settings) as store:
        assert [(p.offset, p.leader_epoch) for p in store.committed_at("c1", "g", T0)] == [(42, 3)]
        store.set_tail_position("c1", 0, 7, T0)  # the table added by version 2
        assert store.tail_position("c1", 0) is not None
    assert version(settings) == len(MIGRATIONS)


def test_open_newer_database_refused_with_store_error(settings: StoreSettings) -> None:
    newer = len(MIGRATIONS) + 1
    with contextlib.closing(_conn(settings)) as conn:
        migrate(conn)
        if conn.dialect.postgresql:
            conn.execute("UPDATE offsetguard_schema SET version = ?", (newer,))
        else:
            conn.execute(f"PRAGMA user_version = {newer}")
    with pytest.raises(StoreError, match="newer"):
        Store.open(settings)
    assert version(settings) == newer


def test_migrate_failing_step_rolls_back_to_previous_version(settings: StoreSettings) -> None:
    def boom(conn: Connection) -> None:
        conn.execute("CREATE TABLE half_done (x INTEGER)")
        raise sqlite3.OperationalError("disk on fire")

    with contextlib.closing(_conn(settings)) as conn:
        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, (*MIGRATIONS, Migration(len(MIGRATIONS) + 1, "broken", boom)))
        assert schema_version(conn) == len(MIGRATIONS)
    assert "half_done" not in tables(settings)


def test_migrate_later_migration_adds_table_to_existing_database(settings: StoreSettings) -> None:
    with contextlib.closing(_conn(settings)) as conn:
        migrate(conn)
        next_version = len(MIGRATIONS) + 1
        later = (
            *MIGRATIONS,
            Migration(next_version, "later", sql("CREATE TABLE later (id INTEGER PRIMARY KEY)")),
        )
        assert migrate(conn, later) == next_version
    assert "later" in tables(settings)


def test_migrate_misnumbered_migrations_refused(settings: StoreSettings) -> None:
    with contextlib.closing(_conn(settings)) as conn:
        with pytest.raises(StoreError, match="expected 2"):
            migrate(conn, (MIGRATIONS[0], Migration(3, "skips 2", sql())))
        assert schema_version(conn) == 0


def test_migrate_concurrent_opens_migrate_once(settings: StoreSettings) -> None:
    """Two replicas starting together on a fresh database: one migrates, the other finds it done."""
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def start() -> None:
        try:
            barrier.wait()
            open_migrated(settings, "store").close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert version(settings) == len(MIGRATIONS)
