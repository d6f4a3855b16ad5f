"""The snapshot index: SQL for the ``snapshots`` table (migration 3), rows as :class:`SnapshotInfo`.

The files of a snapshot are the truth; these rows only make snapshots findable by cluster and group
without walking the snapshot directory. Retention deletes a snapshot's row together with its files.
"""

from __future__ import annotations

from typing import Any

from collectors.snapshots import SnapshotInfo
from store.db import Connection

_NAMES = (
    "id", "cluster", "grp", "partition", "trigger", "created_at", "path", "first_offset", "last_offset",
    "record_count", "bytes", "manifest_sha256", "truncated",
)  # fmt: skip
_COLUMNS = ", ".join(_NAMES)


def add(conn: Connection, info: SnapshotInfo) -> None:
    """Insert (or replace, for the same id) one snapshot's row."""
    conn.execute(
        conn.dialect.replace_into("snapshots", _NAMES, ("id",)),
        (
            info.id,
            info.cluster,
            info.group,
            info.partition,
            info.trigger,
            info.created_at,
            info.path,
            info.first_offset,
            info.last_offset,
            info.record_count,
            info.bytes,
            info.manifest_sha256,
            int(info.truncated),
        ),
    )


def delete(conn: Connection, snapshot_id: str) -> bool:
    """Remove one row; False if there was none."""
    return conn.execute("DELETE FROM snapshots WHERE id = ?", (snapshot_id,)).rowcount > 0


def listed(conn: Connection, cluster: str | None, group: str | None) -> tuple[SnapshotInfo, ...]:
    """Rows matching ``cluster``/``group`` (None matches any), oldest first."""
    where, params = [], []
    if cluster is not None:
        where.append("cluster = ?")
        params.append(cluster)
    if group is not None:
        where.append("grp = ?")
        params.append(group)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM snapshots{clause} ORDER BY id", params).fetchall()
    return tuple(_info(row) for row in rows)


def one(conn: Connection, snapshot_id: str) -> SnapshotInfo | None:
    """The row of ``snapshot_id``, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
    return None if row is None else _info(row)


def _info(row: tuple[Any, ...]) -> SnapshotInfo:
    (sid, cluster, grp, partition, trigger, created_at, path, first, last, count, size, sha, truncated) = row
    return SnapshotInfo(
        id=sid,
        cluster=cluster,
        group=grp,
        partition=partition,
        trigger=trigger,
        created_at=created_at,
        path=path,
        first_offset=first,
        last_offset=last,
        record_count=count,
        bytes=size,
        manifest_sha256=sha,
        truncated=bool(truncated),
    )
