"""Opening a store file: a writer connection (:func:`store.db.connect`), its schema migrated to the newest.

Beside :mod:`store.db` (connections) and :mod:`store.migrations` (the schema), which it joins: each store
class opens its file here. A file that is not a database, or a damaged one, raises
:class:`~collectors.errors.StoreCorruptError` naming the file and the recovery (:func:`recovery`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from collectors.errors import StoreCorruptError
from store.db import connect, translated
from store.migrations import migrate


def recovery(path: Path) -> str:
    """What to do about a damaged store file, and what each way loses."""
    return (
        f"stop offsetguard, then either restore {path} from a backup (the history, alerts and queued "
        f"notifications since that backup are lost), or move it aside (mv {path} {path}.corrupt, with its "
        f"-wal and -shm files) to start with an empty store: offset history, alerts, silences, the "
        f"notification queue, the detection state and the tail's positions are lost; "
        f"`offsetguard store check --path {path}` checks a file before starting"
    )


def open_migrated(path: Path, what: str) -> sqlite3.Connection:
    """A writer connection to ``path`` (parent directories created), its schema migrated to the newest.

    Every store class opens its file through this, so they all see the same schema version.
    """
    try:
        with translated(f"open {what} {path}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path)
        try:
            with translated(f"migrate store {path}"):
                migrate(conn)
        except BaseException:
            conn.close()
            raise
    except StoreCorruptError as exc:
        raise StoreCorruptError(
            f"the store file {path} is damaged or not a SQLite database ({exc.__cause__}): {recovery(path)}",
            path=str(path),
        ) from exc.__cause__
    return conn


def ensure_openable(path: Path) -> None:
    """Open (creating and migrating as needed) and close ``path``: a damaged file raises
    :class:`~collectors.errors.StoreCorruptError` before anything else starts on it."""
    open_migrated(path, "store").close()
