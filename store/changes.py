"""Change counters: how a cache kept beside a shared database learns that another process wrote to it.

On PostgreSQL two replicas share the database, so what one store object remembers (the alert store's
firing alerts and list pages, the history writers' latest values) can be overtaken by the other's
commits. Each such area has a counter row in ``offsetguard_changes``, incremented inside every write
transaction to it (the write lock makes the increments a total order): a writer that finds the counter
one past what it last wrote knows nobody else wrote since; anything else means its cache is stale. A
reader compares the counter with the one its cached answer was read at. SQLite's store is one process's
file: no counters there (:attr:`store.dialect.Dialect.shared`), and its schema is unchanged.
"""

from __future__ import annotations

from store.db import Connection

ALERTS = "alerts"  # the alerts table (AlertStore's firing cache and list pages)
HISTORY = "history"  # the latest_* tables (Store's committed and partition writers)


def bump(conn: Connection, name: str) -> int:
    """Increment ``name``'s counter inside the caller's write transaction; the new value."""
    row = conn.execute(
        "INSERT INTO offsetguard_changes (name, counter) VALUES (?, 1)"
        " ON CONFLICT (name) DO UPDATE SET counter = offsetguard_changes.counter + 1 RETURNING counter",
        (name,),
    ).fetchone()
    return int(row[0])


def current(conn: Connection, name: str) -> int:
    """``name``'s counter now (0 before its first write)."""
    row = conn.execute("SELECT counter FROM offsetguard_changes WHERE name = ?", (name,)).fetchone()
    return 0 if row is None else int(row[0])
