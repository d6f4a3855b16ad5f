"""Fixtures for the store tests: a fresh database per test, on each backend.

``settings`` (and so ``store``, and every fixture built on them) is parametrised over SQLite (a file in
the test's directory) and PostgreSQL (a fresh database on the session's server,
:mod:`tests.support.postgres`): a test written against them runs on both, ``test_x[sqlite]`` and
``test_x[postgresql]``. Tests of SQLite's own behaviour (the file, pragmas, a full disk, corruption,
backup) take ``sqlite_settings`` instead and are named for SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from store import Store
from store.db import Connection, connect_to
from store.settings import StoreSettings
from tests.support.postgres import PostgresServer

BACKENDS = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only") is not None
        metafunc.parametrize("backend", ("sqlite",) if only else BACKENDS)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[StoreSettings]:
    path = tmp_path / "var" / "offsetguard.db"
    if backend == "sqlite":
        yield StoreSettings(path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    yield StoreSettings(path=path, url=url)
    if server.running:
        server.drop_database(url.rsplit("/", 1)[1])


@pytest.fixture
def sqlite_settings(tmp_path: Path) -> StoreSettings:
    return StoreSettings(path=tmp_path / "var" / "offsetguard.db")


@pytest.fixture
def store(settings: StoreSettings) -> Iterator[Store]:
    with Store.open(settings) as opened:
        yield opened


@pytest.fixture
def raw(store: Store, settings: StoreSettings) -> Iterator[Connection]:
    """The test's own connection to the (migrated) store database, outside the store classes."""
    conn = connect_to(settings)
    try:
        yield conn
    finally:
        conn.close()


@pytest.fixture
def hold_write_lock(settings: StoreSettings) -> Callable[[], AbstractContextManager[None]]:
    """Hold the database's write lock from another connection for the block (SQLite's BEGIN IMMEDIATE,
    PostgreSQL's advisory lock), as another process writing would."""

    @contextmanager
    def held() -> Iterator[None]:
        conn = connect_to(settings)
        try:
            for statement in conn.dialect.begin_write:
                conn.execute(statement)
            yield
            conn.execute("ROLLBACK")
        finally:
            conn.close()

    return held
