"""A real PostgreSQL server for the tests: ``initdb`` / ``pg_ctl`` from PATH (Debian's ``postgresql``
package, installed by ``make install``) in a temporary directory, on 127.0.0.1 and a free port.

initdb refuses to run as root, and the tests run as root here and in CI: the server then runs as
``nobody`` (the directory handed to it; its parents must let ``nobody`` through, as /tmp does: the
default directory is a fresh one there). ``fsync=off``: a test server keeps nothing worth a sync.

Public API (the store tests and the HA end-to-end tests share it):

- :class:`PostgresServer` (``base`` directory, optional ``port`` and ``options``, the server's ``-c``
  settings, :data:`SERVER_SETTINGS` by default): ``start()``, ``stop()``, ``restart()``, ``running``,
  ``host``, ``port``, ``url(database)``, ``create_database(name=None) -> url`` (a fresh, empty
  database), ``drop_database(name)``.
- fixture ``postgres_server`` (session scope): one running server, stopped at the end of the session
  even when tests fail; a test that needs it fails (never skips) when initdb is missing.
- fixture ``postgres_url`` (function scope): the URL of a fresh database for one test.
- :func:`running_server` (a context manager): a server of one's own outside pytest's fixtures.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

USER = "offsetguard"  # the server's superuser
PASSWORD = "offsetguard-test"  # scram-sha-256 over TCP: the URL's password is exercised
HOW_TO_INSTALL = "initdb/pg_ctl not on PATH: run `make install` (deploy/tools/install-postgresql.sh)"
SERVER_SETTINGS = (
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    " -c max_connections=200 -c shared_buffers=32MB"
)


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(HOW_TO_INSTALL)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One PostgreSQL cluster in ``base`` (created by :meth:`start` on first use)."""

    def __init__(self, base: Path, port: int | None = None, options: str = SERVER_SETTINGS) -> None:
        self.base = base
        self.options = options  # postgres -c settings
        self.data = base / "data"
        self.socket_dir = base / "run"
        self.log = base / "server.log"
        self.host = "127.0.0.1"
        self.port = port or _free_port()
        self.running = False
        self._names = itertools.count(1)
        self._as: dict[str, Any] = {"user": "nobody", "group": "nogroup"} if os.geteuid() == 0 else {}

    def _run(self, *args: str) -> None:
        done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120, **self._as)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(
                f"{' '.join(args[:3])} failed ({done.returncode}): {done.stderr.strip()}\n{log}"
            )

    def _initdb(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        pwfile = self.base / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            for path in (self.base, self.socket_dir, pwfile):
                shutil.chown(path, "nobody", "nogroup")
        self._run(
            _tool("initdb"), "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}", "--auth-local=trust",
            "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip

    def start(self) -> None:
        if self.running:
            return
        if not (self.data / "PG_VERSION").exists():
            self._initdb()
        options = f"-p {self.port} -k {self.socket_dir} {self.options}"
        self._run(_tool("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")
        self.running = True

    def stop(self) -> None:
        if not self.running:
            return
        self._run(_tool("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        self.running = False

    def restart(self) -> None:
        """Stop (fast: sessions are disconnected) and start again on the same port."""
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{PASSWORD}@{self.host}:{self.port}/{database}"

    def _admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(), autocommit=True, connect_timeout=10)

    def create_database(self, name: str | None = None) -> str:
        """A fresh empty database; its URL."""
        name = name or f"t{os.getpid()}_{next(self._names)}"
        with contextlib.closing(self._admin()) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        with contextlib.closing(self._admin()) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def running_server(base: Path | None = None, options: str = SERVER_SETTINGS) -> Iterator[PostgresServer]:
    """A started server, stopped (and its directory removed) when the block ends, however it ends."""
    owned = base is None
    where = Path(tempfile.mkdtemp(prefix="og-pg-")) if base is None else base
    server = PostgresServer(where, options=options)
    try:
        server.start()
        yield server
    finally:
        try:
            server.stop()
        finally:
            if owned:
                shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    if shutil.which("initdb") is None or shutil.which("pg_ctl") is None:
        pytest.fail(HOW_TO_INSTALL, pytrace=False)
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database for one test (dropped after it)."""
    url = postgres_server.create_database()
    yield url
    if postgres_server.running:
        postgres_server.drop_database(url.rsplit("/", 1)[1])
