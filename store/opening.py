"""Opening the store: a writer connection (:func:`store.db.connect_to`: the SQLite file, or PostgreSQL at
``store.url``), its schema migrated to the newest.

Beside :mod:`store.db` (connections) and :mod:`store.migrations` (the schema), which it joins: each store
class opens its database here. A PostgreSQL server that cannot be reached raises
:class:`~collectors.errors.StoreWriteError` naming the server (never the password). A file that is not a
database, or a damaged one, raises :class:`~collectors.errors.StoreCorruptError` naming the file and the
recovery (:func:`recovery`).
"""

from __future__ import annotations

from pathlib import Path

from collectors.errors import StoreCorruptError
from store.db import Connection, connect_to, describe, translated
from store.migrations import migrate
from store.settings import StoreSettings


def recovery(path: Path) -> str:
    """What to do about a damaged store file, and what each way loses."""
    return (
        f"stop offsetguard, then either restore {path} from a backup (the history, alerts and queued "
        f"notifications since that backup are lost), or move it aside (mv {path} {path}.corrupt, with its "
        f"-wal and -shm files) to start with an empty store: offset history, alerts, silences, the "
        f"notification queue, the detection state and the tail's positions are lost; "
        f"`offsetguard store check --path {path}` checks a file before starting"
    )


def open_migrated(settings: StoreSettings | Path, what: str) -> Connection:
    """A writer connection to the store (a file's parent directories created), its schema migrated to the
    newest. Every store class opens its database through this, so they all see the same schema version.
    """
    if isinstance(settings, Path):
        settings = StoreSettings(path=settings)
    where = describe(settings)
    path = settings.path
    try:
        with translated(f"open {what} {where}"):
            if settings.url is None:
                path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect_to(settings)
        try:
            with translated(f"migrate store {where}"):
                migrate(conn)
        except BaseException:
            conn.close()
            raise
    except StoreCorruptError as exc:
        if settings.url is not None:
            raise
        raise StoreCorruptError(
            f"the store file {path} is damaged or not a SQLite database ({exc.__cause__}): {recovery(path)}",
            path=str(path),
        ) from exc.__cause__
    return conn


def ensure_openable(settings: StoreSettings | Path) -> None:
    """Open (creating and migrating as needed) and close the store: a damaged file raises
    :class:`~collectors.errors.StoreCorruptError`, an unreachable PostgreSQL server
    :class:`~collectors.errors.StoreWriteError`, before anything else starts on it."""
    open_migrated(settings, "store").close()
