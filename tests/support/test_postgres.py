"""The test PostgreSQL server's own behaviour: its public API, and a clear failure when PostgreSQL's
binaries are missing (never a silent skip)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import psycopg
import pytest

from tests.support.postgres import HOW_TO_INSTALL, PostgresServer


def test_postgres_server_databases_are_fresh_and_survive_a_restart(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()
    with contextlib.closing(psycopg.connect(url, autocommit=True)) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)
        conn.execute("CREATE TABLE kept (x int)")
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
    postgres_server.restart()
    with contextlib.closing(psycopg.connect(url, autocommit=True)) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone() == (0,)
    postgres_server.drop_database(url.rsplit("/", 1)[1])


def test_postgres_server_without_initdb_on_path_says_run_make_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="run `make install`"):
        PostgresServer(tmp_path / "pg").start()
    assert "make install" in HOW_TO_INSTALL
