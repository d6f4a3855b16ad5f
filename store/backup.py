"""A consistent copy of the store file while the service runs: SQLite's online backup API.

The source is opened read-only (``mode=ro``), so a running service's WAL is part of the copy and nothing is
written to it; the copy is a single file in rollback-journal mode (no ``-wal`` beside it), written under a
temporary name and renamed into place, so a failed backup never leaves a half file under the name asked for.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from collectors.errors import StoreError
from store.db import BUSY_TIMEOUT_MS

PAGES_PER_STEP = 1024  # pages copied per step: the service's writers wait at most one step for the lock


def backup(source: Path, dest: Path) -> int:
    """Copy ``source`` into the new file ``dest``; return its size in bytes. Refuses an existing ``dest``."""
    if not source.is_file():
        raise StoreError(f"no store file at {source}")
    if dest.exists():
        raise StoreError(f"{dest} exists: a backup never overwrites a file")
    partial = dest.with_name(f".{dest.name}.partial")
    try:
        src = sqlite3.connect(
            f"file:{quote(str(source.resolve()))}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {source}: {exc}") from exc
    try:
        partial.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(partial)) as out:
            src.backup(out, pages=PAGES_PER_STEP)
            out.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        os.replace(partial, dest)
    except (sqlite3.Error, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise StoreError(f"backup of {source} to {dest} failed: {exc}") from exc
    finally:
        src.close()
    return dest.stat().st_size
