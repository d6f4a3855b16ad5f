"""The store's connections: pragmas of the writer and of the readers."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from store.db import (
    CACHE_KIB,
    LARGE_VALUES_CACHE_KIB,
    READER_CACHE_KIB,
    connect,
    small_cache,
    transaction,
)


def test_the_writer_caches_more_than_a_reader_and_only_the_writer_writes(tmp_path: Path) -> None:
    path = tmp_path / "og.db"
    writer = connect(path)
    reader = connect(path, readonly=True)
    try:
        assert writer.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
        assert reader.execute("PRAGMA cache_size").fetchone()[0] == -READER_CACHE_KIB
        assert READER_CACHE_KIB < CACHE_KIB
        assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        writer.execute("CREATE TABLE t (x)")
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|query_only|attempt to write"):
            reader.execute("INSERT INTO t VALUES (1)")
    finally:
        reader.close()
        writer.close()


def test_small_cache_bounds_the_cache_for_the_block_and_restores_it_even_on_error(tmp_path: Path) -> None:
    writer = connect(tmp_path / "og.db")
    try:
        writer.execute("CREATE TABLE t (x)")
        with small_cache(writer), transaction(writer):
            assert writer.execute("PRAGMA cache_size").fetchone()[0] == -LARGE_VALUES_CACHE_KIB
            # a transaction larger than the bound: its pages spill to the WAL, the commit keeps them all
            writer.executemany("INSERT INTO t VALUES (?)", (("x" * 100_000,) for _ in range(40)))
        assert writer.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
        assert writer.execute("SELECT count(*), sum(length(x)) FROM t").fetchone() == (40, 4_000_000)
        with pytest.raises(RuntimeError), small_cache(writer):
            raise RuntimeError("boom")
        assert writer.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    finally:
        writer.close()


def test_a_sqlite_store_never_loads_psycopg(tmp_path: Path) -> None:
    """libpq is ~20 MB of RSS: only a PostgreSQL store pays for it (a fresh interpreter, the whole app)."""
    code = f"""
import sys
from service.app import create_app
from service.settings import Settings
from store.store import Store
cluster = {{"name": "c", "bootstrap_servers": "127.0.0.1:1"}}
settings = Settings.model_validate({{"clusters": [cluster], "store": {{"path": "{tmp_path / "s.db"}"}}}})
create_app(settings)
with Store.open(settings.store) as store:
    store.set_tail_position("c", 0, 5, 1.0)
    assert store.tail_position("c", 0) is not None
print(sorted(m for m in sys.modules if m.split(".")[0] == "psycopg"))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
