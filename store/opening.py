"""Opening a store file: a writer connection (:func:`store.db.connect`), its schema migrated to the newest.

Beside :mod:`store.db` (connections) and :mod:`store.migrations` (the schema), which it joins: each store
class opens its file here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store.db import connect, translated
from store.migrations import migrate


def open_migrated(path: Path, what: str) -> sqlite3.Connection:
    """A writer connection to ``path`` (parent directories created), its schema migrated to the newest.

    Every store class opens its file through this, so they all see the same schema version.
    """
    with translated(f"open {what} {path}"):
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(path)
    try:
        with translated(f"migrate store {path}"):
            migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn
