"""The store's connections: pragmas of the writer and of the readers."""

import sqlite3
from pathlib import Path

import pytest

from service.store.db import CACHE_KIB, READER_CACHE_KIB, connect


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
