"""Checking a store file before starting on it: SQLite's ``integrity_check`` (or ``quick_check``), read-only.

:func:`check` never writes, never creates the file, and never raises: a file that is missing or cannot be
opened, one that is not a database and one with damaged pages each come back as a :class:`CheckResult`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from store.db import BUSY_TIMEOUT_MS, corruption

OK, CORRUPT, UNOPENABLE = "ok", "corrupt", "cannot_open"
MAX_PROBLEMS = 100  # SQLite stops listing after this many


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``status`` ok, corrupt or cannot_open; ``problems`` SQLite's lines (or the error) otherwise."""

    path: Path
    status: str
    problems: tuple[str, ...] = ()
    check: str = "integrity_check"


def check(path: Path, *, quick: bool = False) -> CheckResult:
    """Run ``PRAGMA integrity_check`` (``quick_check``: O(N) without the index cross-checks) on ``path``."""
    pragma = "quick_check" if quick else "integrity_check"
    if not path.is_file():
        why = "no such file" if not path.exists() else "not a regular file"
        return CheckResult(path, UNOPENABLE, (why,), pragma)
    try:
        # mode=ro: never creates or writes the file; a running service's WAL is read as it is
        conn = sqlite3.connect(
            f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except sqlite3.Error as exc:
        return CheckResult(path, UNOPENABLE, (str(exc),), pragma)
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}({MAX_PROBLEMS})")]
    except sqlite3.Error as exc:
        status = CORRUPT if corruption(exc) is not None else UNOPENABLE
        return CheckResult(path, status, (str(exc),), pragma)
    finally:
        conn.close()
    if rows == ["ok"]:
        return CheckResult(path, OK, (), pragma)
    return CheckResult(path, CORRUPT, tuple(rows), pragma)
