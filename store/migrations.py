"""The store's schema as an ordered list of migrations, tracked in SQLite's ``user_version`` (on PostgreSQL,
the ``offsetguard_schema`` row).

Each migration is written once, in SQLite's DDL; :meth:`store.dialect.Dialect.ddl` renders it for
PostgreSQL. Every migration transaction holds the database's write lock (on PostgreSQL an advisory lock),
and re-reads the version under it, so two replicas starting together never both migrate.

A later feature adds tables by appending a :class:`Migration` with the next version number; never edit
one that has shipped. Each migration runs in its own transaction together with the version bump, so a
failure leaves the database at the previous version.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from collectors.errors import StoreError
from store.db import Connection, transaction

Apply = Callable[[Connection], None]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``apply`` moves a database from ``version - 1`` to ``version``."""

    version: int
    name: str
    apply: Apply


def sql(*statements: str) -> Apply:
    """A migration step that executes ``statements`` in order."""

    def apply(conn: Connection) -> None:
        for statement in statements:
            conn.execute(conn.dialect.ddl(statement))

    return apply


_V1_HISTORY = sql(
    # The latest_* tables double as the key registries: history rows refer to them by a small integer id
    # instead of repeating cluster/group/topic strings in every row.
    """
    CREATE TABLE latest_committed (
        id INTEGER PRIMARY KEY,
        cluster TEXT NOT NULL,
        grp TEXT NOT NULL,
        topic TEXT NOT NULL,
        partition INTEGER NOT NULL,
        committed_offset INTEGER,            -- NULL: the offset was deleted
        leader_epoch INTEGER,
        metadata TEXT NOT NULL DEFAULT '',
        changed_at REAL NOT NULL,
        last_seen_at REAL NOT NULL,
        UNIQUE (cluster, grp, topic, partition)
    )
    """,
    """
    CREATE TABLE committed_history (
        key_id INTEGER NOT NULL REFERENCES latest_committed (id) ON DELETE CASCADE,
        observed_at REAL NOT NULL,
        committed_offset INTEGER,
        leader_epoch INTEGER,
        metadata TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (key_id, observed_at)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE latest_partition_offsets (
        id INTEGER PRIMARY KEY,
        cluster TEXT NOT NULL,
        topic TEXT NOT NULL,
        partition INTEGER NOT NULL,
        log_start INTEGER,
        log_end INTEGER,
        leader INTEGER,
        leader_epoch INTEGER,
        changed_at REAL NOT NULL,
        last_seen_at REAL NOT NULL,
        UNIQUE (cluster, topic, partition)
    )
    """,
    """
    CREATE TABLE partition_offsets_history (
        key_id INTEGER NOT NULL REFERENCES latest_partition_offsets (id) ON DELETE CASCADE,
        observed_at REAL NOT NULL,
        log_start INTEGER,
        log_end INTEGER,
        leader INTEGER,
        leader_epoch INTEGER,
        PRIMARY KEY (key_id, observed_at)
    ) WITHOUT ROWID
    """,
)

_V2_TAIL_POSITIONS = sql(
    """
    CREATE TABLE tail_positions (
        cluster TEXT NOT NULL,
        partition INTEGER NOT NULL,
        next_offset INTEGER NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (cluster, partition)
    ) WITHOUT ROWID
    """,
)

_V3_SNAPSHOTS = sql(
    # The index of __consumer_offsets snapshots; the files themselves live in snapshots.directory.
    """
    CREATE TABLE snapshots (
        id TEXT PRIMARY KEY,                 -- also the snapshot's directory name (sortable by time)
        cluster TEXT NOT NULL,
        grp TEXT NOT NULL,
        partition INTEGER NOT NULL,          -- of __consumer_offsets
        trigger TEXT NOT NULL,               -- "manual" or an alert id
        created_at REAL NOT NULL,
        path TEXT NOT NULL,
        first_offset INTEGER,                -- NULL: nothing was read
        last_offset INTEGER,
        record_count INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        manifest_sha256 TEXT NOT NULL,
        truncated INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID
    """,
    "CREATE INDEX snapshots_by_group ON snapshots (cluster, grp, created_at)",
)

_V4_ALERTS = sql(
    # Alerts and their lifecycle. ``seq`` orders them (newest first = seq DESC, the list cursor); ``id`` is
    # what the API and snapshot triggers name. At most one firing alert per fingerprint, enforced here.
    """
    CREATE TABLE alerts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        fingerprint TEXT NOT NULL,           -- JSON [kind, cluster, group, topic, partition]
        kind TEXT NOT NULL,
        severity TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('firing', 'resolved')),
        cluster TEXT NOT NULL,
        grp TEXT,
        topic TEXT,
        partition INTEGER,
        started_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        resolved_at REAL,
        resolved_reason TEXT,                -- acknowledged, quiet_period, cleared
        summary TEXT NOT NULL,
        cause TEXT,
        magnitude TEXT NOT NULL,             -- JSON: the latest occurrence
        magnitude_total TEXT NOT NULL,       -- JSON: summed over distinct occurrences (event-like kinds)
        evidence TEXT NOT NULL,              -- JSON
        occurrence TEXT NOT NULL,            -- identity of the latest occurrence (not counted twice)
        occurrences INTEGER NOT NULL,
        snapshot_id TEXT,
        ack_by TEXT,
        ack_comment TEXT,
        acked_at REAL
    )
    """,
    "CREATE UNIQUE INDEX alerts_firing_fingerprint ON alerts (fingerprint) WHERE status = 'firing'",
    "CREATE INDEX alerts_by_cluster ON alerts (cluster, status, seq)",
    """
    CREATE TABLE alert_transitions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        alert_id TEXT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
        at REAL NOT NULL,
        transition TEXT NOT NULL,            -- fired, repeated, reclassified, changed, acked, resolved, ...
        severity TEXT NOT NULL,
        cause TEXT,
        detail TEXT NOT NULL                 -- JSON
    )
    """,
    "CREATE INDEX alert_transitions_by_alert ON alert_transitions (alert_id, seq)",
    """
    CREATE TABLE detection_state (
        cluster TEXT PRIMARY KEY,
        saved_at REAL NOT NULL,
        format INTEGER NOT NULL,
        body TEXT NOT NULL                   -- JSON of alerts.state.DetectionState
    ) WITHOUT ROWID
    """,
)

_V5_NOTIFICATIONS = sql(
    # The notification queue. Rows are fanned out from alert_transitions (the outbox: written in the same
    # transaction as the alert) up to notify_progress.transition_seq, which advances in the same
    # transaction as the rows it produced, so a transition is turned into notifications exactly once.
    """
    CREATE TABLE notifications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        receiver TEXT NOT NULL,
        alert_id TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN ('firing', 'updated', 'resolved')),
        transition_seq INTEGER,              -- NULL: not from a transition (silence ended, new receiver)
        payload TEXT NOT NULL,               -- JSON, as the receiver gets it
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'silenced', 'abandoned')),
        silence_id TEXT,                     -- state 'silenced': the silence that held it back
        created_at REAL NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL,                -- pending rows only
        delivered_at REAL,
        last_error TEXT
    )
    """,
    "CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE state = 'pending'",
    "CREATE INDEX notifications_by_alert ON notifications (alert_id, receiver, event)",
    """
    CREATE TABLE notify_progress (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        transition_seq INTEGER NOT NULL      -- alert_transitions up to here are fanned out
    )
    """,
    # An upgraded store starts after its existing history: alerts still firing are notified once by the
    # catch-up pass instead of replaying every past transition.
    "INSERT INTO notify_progress (id, transition_seq) SELECT 1, COALESCE(MAX(seq), 0) FROM alert_transitions",
    """
    CREATE TABLE silences (
        id TEXT PRIMARY KEY,
        matchers TEXT NOT NULL,              -- JSON [{"name", "op", "value"}]
        starts_at REAL NOT NULL,
        ends_at REAL NOT NULL,               -- DELETE expires a silence: ends_at = now
        comment TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    ) WITHOUT ROWID
    """,
    "CREATE INDEX silences_by_end ON silences (ends_at)",
)

_V6_RESOLVED = sql(
    # Every evaluation reads the occurrences of event-like alerts resolved in the last quiet period (the
    # same occurrence reported again must not fire anew). Resolved alerts are kept, so without this index
    # that read walked every resolved alert the cluster ever had: 119,000 rows, 84 ms, up to 24 times a
    # minute, inside the write transaction. IF NOT EXISTS: a store rewound to an older version keeps it.
    "CREATE INDEX IF NOT EXISTS alerts_resolved_by_cluster ON alerts (cluster, status, resolved_at)",
)

_V7_STATE_PARTS = sql(
    # The detection state's large sections, a chunk of rows per row (format 4 of
    # service.detection.state_codec; detection_state.body then holds only its small members). One 18 MB
    # value was held whole three times over on each save and load: as text, in SQLite's copy of the bound
    # parameter (kept by the cached statement until its next use) and in the writer's page cache.
    # IF NOT EXISTS: a store rewound to an older version keeps it.
    """
    CREATE TABLE IF NOT EXISTS detection_state_parts (
        cluster TEXT NOT NULL,
        seq INTEGER NOT NULL,
        section TEXT NOT NULL,
        body TEXT NOT NULL,                  -- JSON array of the section's rows
        PRIMARY KEY (cluster, seq)
    )
    """,
)

_V8_PRUNED_TOTALS = sql(
    # What the resolved alerts deleted by retention (store.alert_retention) had counted, per kind and
    # cluster: the incident and magnitude counters of /metrics sum the alerts kept and these, so that
    # deleting an alert never makes a counter go down. Drills are not counted (as in those counters).
    # IF NOT EXISTS: a store rewound to an older version keeps it.
    """
    CREATE TABLE IF NOT EXISTS alert_totals_pruned (
        kind TEXT NOT NULL,
        cluster TEXT NOT NULL,
        occurrences INTEGER NOT NULL,
        messages_replayed INTEGER NOT NULL,
        messages_skipped INTEGER NOT NULL,
        messages_lost INTEGER NOT NULL,
        PRIMARY KEY (kind, cluster)
    ) WITHOUT ROWID
    """,
)

_V9_RECENT = sql(
    # The histories' newest rows, merged into committed_history / partition_offsets_history about once a
    # minute (store.recent), with the same columns. The committed offsets' are keyed by time first so
    # that each write appends (only the API reads them); the log ranges' by key, as their history, since
    # lag in seconds reads them by partition. IF NOT EXISTS: a store rewound to an older version keeps them.
    """
    CREATE TABLE IF NOT EXISTS committed_recent (
        key_id INTEGER NOT NULL REFERENCES latest_committed (id) ON DELETE CASCADE,
        observed_at REAL NOT NULL,
        committed_offset INTEGER,
        leader_epoch INTEGER,
        metadata TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (observed_at, key_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS partition_offsets_recent (
        key_id INTEGER NOT NULL REFERENCES latest_partition_offsets (id) ON DELETE CASCADE,
        observed_at REAL NOT NULL,
        log_start INTEGER,
        log_end INTEGER,
        leader INTEGER,
        leader_epoch INTEGER,
        PRIMARY KEY (key_id, observed_at)
    ) WITHOUT ROWID
    """,
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "committed and partition offset history", _V1_HISTORY),
    Migration(2, "__consumer_offsets tail positions", _V2_TAIL_POSITIONS),
    Migration(3, "__consumer_offsets snapshot index", _V3_SNAPSHOTS),
    Migration(4, "alerts, their transitions and the detection state", _V4_ALERTS),
    Migration(5, "notification queue and silences", _V5_NOTIFICATIONS),
    Migration(6, "index of the alerts resolved lately", _V6_RESOLVED),
    Migration(7, "the detection state in parts", _V7_STATE_PARTS),
    Migration(8, "counts of the alerts deleted by retention", _V8_PRUNED_TOTALS),
    Migration(9, "the histories' newest rows", _V9_RECENT),
)


# PostgreSQL's bookkeeping beside the schema: the version (SQLite keeps it in its header) and the change
# counters of store.changes (caches beside a shared database check them).
_PG_BOOKKEEPING = (
    "CREATE TABLE IF NOT EXISTS offsetguard_schema"
    " (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
    "INSERT INTO offsetguard_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    "CREATE TABLE IF NOT EXISTS offsetguard_changes"
    ' (name TEXT COLLATE "C" PRIMARY KEY, counter BIGINT NOT NULL)',
)


def schema_version(conn: Connection) -> int:
    """The schema version recorded in the database (0 for a fresh one)."""
    if conn.dialect.postgresql:
        if conn.execute("SELECT to_regclass('offsetguard_schema')").fetchone()[0] is None:
            return 0
        return int(conn.execute("SELECT version FROM offsetguard_schema WHERE id = 1").fetchone()[0])
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _set_version(conn: Connection, version: int) -> None:
    if conn.dialect.postgresql:
        conn.execute("UPDATE offsetguard_schema SET version = ? WHERE id = 1", (version,))
    else:
        conn.execute(f"PRAGMA user_version = {version}")


def migrate(conn: Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations the database lacks and return its final version.

    Raises :class:`StoreError` if the database is newer than ``migrations`` know (an older offsetguard
    must not write to a schema it does not understand).
    """
    for index, migration in enumerate(migrations, start=1):
        if migration.version != index:
            raise StoreError(
                f"migration {migration.name!r} has version {migration.version}, expected {index}"
            )
    latest = len(migrations)
    if conn.dialect.postgresql and schema_version(conn) == 0:
        with transaction(conn):
            for statement in _PG_BOOKKEEPING:
                conn.execute(statement)
    current = schema_version(conn)
    if current > latest:
        raise StoreError(
            f"database schema version {current} is newer than this offsetguard supports ({latest}); "
            "upgrade offsetguard or point the store elsewhere"
        )
    for migration in migrations[current:]:
        with transaction(conn):
            # Re-read under the write lock: another process may have migrated since we looked.
            if schema_version(conn) >= migration.version:
                continue
            migration.apply(conn)
            _set_version(conn, migration.version)
    return schema_version(conn)
