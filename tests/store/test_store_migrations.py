"""Schema versions: fresh databases, reopening, upgrading old ones and refusing newer ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from collectors.errors import StoreError
from collectors.model import CommittedObservation, CommittedOffset
from store import Store, db
from store.migrations import MIGRATIONS, Migration, migrate, schema_version, sql
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def version(path: Path) -> int:
    conn = db.connect(path)
    try:
        return schema_version(conn)
    finally:
        conn.close()


def test_open_fresh_database_creates_parent_dirs_and_latest_schema(settings: StoreSettings) -> None:
    assert not settings.path.parent.exists()
    Store.open(settings).close()
    assert version(settings.path) == len(MIGRATIONS)
    assert {"latest_committed", "committed_history", "tail_positions"} <= tables(settings.path)


def test_connect_writer_sets_wal_normal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
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


def test_connect_reader_refuses_writes(tmp_path: Path) -> None:
    Store.open(StoreSettings(path=tmp_path / "x.db")).close()
    reader = db.connect(tmp_path / "x.db", readonly=True)
    try:
        with pytest.raises(sqlite3.OperationalError):
            reader.execute("DELETE FROM tail_positions")
    finally:
        reader.close()


def test_open_existing_database_keeps_data_without_remigrating(settings: StoreSettings) -> None:
    observation = CommittedObservation("c1", T0, (CommittedOffset("g", "t", 0, 5, None),), ("g",))
    with Store.open(settings) as store:
        store.record_committed(observation)
    with Store.open(settings) as store:
        assert [p.offset for p in store.latest_committed("c1", "g")] == [5]
    assert version(settings.path) == len(MIGRATIONS)


def test_open_version_1_database_migrates_and_keeps_history(settings: StoreSettings) -> None:
    settings.path.parent.mkdir(parents=True)
    conn = db.connect(settings.path)
    assert migrate(conn, MIGRATIONS[:1]) == 1
    conn.execute("INSERT INTO latest_committed VALUES (1, 'c1', 'g', 't', 0, 42, 3, '', ?, ?)", (T0, T0))
    conn.execute("INSERT INTO committed_history VALUES (1, ?, 42, 3, '')", (T0,))
    conn.close()
    with Store.open(settings) as store:
        assert [(p.offset, p.leader_epoch) for p in store.committed_at("c1", "g", T0)] == [(42, 3)]
        store.set_tail_position("c1", 0, 7, T0)  # the table added by version 2
        assert store.tail_position("c1", 0) is not None
    assert version(settings.path) == len(MIGRATIONS)


def test_open_newer_database_refused_with_store_error(settings: StoreSettings) -> None:
    settings.path.parent.mkdir(parents=True)
    with sqlite3.connect(settings.path) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer"):
        Store.open(settings)
    assert version(settings.path) == len(MIGRATIONS) + 1


def test_migrate_failing_step_rolls_back_to_previous_version(tmp_path: Path) -> None:
    def boom(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk on fire")

    conn = db.connect(tmp_path / "x.db")
    try:
        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, (*MIGRATIONS, Migration(len(MIGRATIONS) + 1, "broken", boom)))
        assert schema_version(conn) == len(MIGRATIONS)
    finally:
        conn.close()
    assert "half_done" not in tables(tmp_path / "x.db")


def test_migrate_later_migration_adds_table_to_existing_database(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.db")
    try:
        migrate(conn)
        next_version = len(MIGRATIONS) + 1
        later = (
            *MIGRATIONS,
            Migration(next_version, "later", sql("CREATE TABLE later (id INTEGER PRIMARY KEY)")),
        )
        assert migrate(conn, later) == next_version
    finally:
        conn.close()
    assert "later" in tables(tmp_path / "x.db")


def test_migrate_misnumbered_migrations_refused(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "x.db")
    try:
        with pytest.raises(StoreError, match="expected 2"):
            migrate(conn, (MIGRATIONS[0], Migration(3, "skips 2", sql())))
        assert schema_version(conn) == 0
    finally:
        conn.close()
