"""Read queries: plain functions from a connection and arguments to frozen records.

Each function is a single SQL statement so it reads one consistent snapshot. Time ranges are inclusive
on both ends; None leaves that end open.
"""

from __future__ import annotations

import math

from store.db import Connection
from store.records import (
    CommittedPoint,
    LatestCommitted,
    LatestPartition,
    PartitionPoint,
    TailPosition,
)

_FAR_PAST = -math.inf
_FAR_FUTURE = math.inf


def _bounds(since: float | None, until: float | None) -> tuple[float, float]:
    return (_FAR_PAST if since is None else since, _FAR_FUTURE if until is None else until)


def latest_committed(
    conn: Connection, cluster: str, group: str, *, include_deleted: bool = False
) -> tuple[LatestCommitted, ...]:
    rows = conn.execute(
        """
        SELECT topic, partition, committed_offset, leader_epoch, metadata, changed_at, last_seen_at
        FROM latest_committed
        WHERE cluster = ? AND grp = ? AND (? OR committed_offset IS NOT NULL)
        ORDER BY topic, partition
        """,
        (cluster, group, include_deleted),
    )
    return tuple(LatestCommitted(cluster, group, *row) for row in rows)


def committed_topics(conn: Connection, cluster: str) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT DISTINCT topic FROM latest_committed WHERE cluster = ? AND committed_offset IS NOT NULL",
        (cluster,),
    )
    return tuple(sorted(row[0] for row in rows))


def committed_history(
    conn: Connection,
    cluster: str,
    group: str,
    topic: str | None,
    partition: int | None,
    since: float | None,
    until: float | None,
) -> tuple[CommittedPoint, ...]:
    low, high = _bounds(since, until)
    # The history's two tables (store.recent): the recent rows (one pass over them, they are in time
    # order), and the merged rows none of them replaces.
    rows = conn.execute(
        """
        SELECT l.topic, l.partition, h.observed_at, h.committed_offset, h.leader_epoch, h.metadata
        FROM committed_recent AS h CROSS JOIN latest_committed AS l
        WHERE l.id = h.key_id AND h.observed_at BETWEEN :low AND :high AND {match}
        UNION ALL
        SELECT l.topic, l.partition, h.observed_at, h.committed_offset, h.leader_epoch, h.metadata
        FROM latest_committed AS l JOIN committed_history AS h ON h.key_id = l.id
        WHERE {match} AND h.observed_at BETWEEN :low AND :high
          AND NOT EXISTS (
              SELECT 1 FROM committed_recent AS r WHERE r.observed_at = h.observed_at AND r.key_id = h.key_id)
        ORDER BY 1, 2, 3
        """.format(
            match="l.cluster = :cluster AND l.grp = :group AND (:topic IS NULL OR l.topic = :topic)"
            " AND (:partition IS NULL OR l.partition = :partition)"
        ),
        {"cluster": cluster, "group": group, "topic": topic, "partition": partition}
        | {"low": low, "high": high},
    )
    return tuple(CommittedPoint(cluster, group, *row) for row in rows)


def committed_at(conn: Connection, cluster: str, group: str, at: float) -> tuple[CommittedPoint, ...]:
    # Per key, the newest row at or before `at` of each of the history's two tables (store.recent): of the
    # merged rows through the (key_id, observed_at) primary key, so the cost follows the number of
    # partitions, not the length of their history; of the recent ones in one pass over them. The recent
    # row wins a tie (it replaced the merged one).
    rows = conn.execute(
        """
        WITH k AS (
            SELECT l.id, l.topic, l.partition,
                (SELECT max(observed_at) FROM committed_history WHERE key_id = l.id AND observed_at <= :at)
                    AS merged_at
            FROM latest_committed AS l WHERE l.cluster = :cluster AND l.grp = :group
        ), r AS (
            SELECT key_id, max(observed_at) AS recent_at FROM committed_recent
            WHERE observed_at <= :at AND key_id IN (SELECT id FROM k) GROUP BY key_id
        )
        SELECT l.topic, l.partition, h.observed_at, h.committed_offset, h.leader_epoch, h.metadata
        FROM r JOIN latest_committed AS l ON l.id = r.key_id
        JOIN committed_recent AS h ON h.observed_at = r.recent_at AND h.key_id = r.key_id
        WHERE h.committed_offset IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM committed_history AS m
            WHERE m.key_id = r.key_id AND m.observed_at > r.recent_at AND m.observed_at <= :at)
        UNION ALL
        SELECT k.topic, k.partition, h.observed_at, h.committed_offset, h.leader_epoch, h.metadata
        FROM k LEFT JOIN r ON r.key_id = k.id
        JOIN committed_history AS h ON h.key_id = k.id AND h.observed_at = k.merged_at
        WHERE (r.recent_at IS NULL OR r.recent_at < k.merged_at) AND h.committed_offset IS NOT NULL
        ORDER BY 1, 2
        """,
        {"cluster": cluster, "group": group, "at": at},
    )
    return tuple(CommittedPoint(cluster, group, *row) for row in rows)


def partition_history(
    conn: Connection,
    cluster: str,
    topic: str,
    partition: int | None,
    since: float | None,
    until: float | None,
) -> tuple[PartitionPoint, ...]:
    low, high = _bounds(since, until)
    arm = """
        SELECT l.partition, h.observed_at, h.log_start, h.log_end, h.leader, h.leader_epoch
        FROM latest_partition_offsets AS l JOIN {table} AS h ON h.key_id = l.id
        WHERE l.cluster = :cluster AND l.topic = :topic AND (:partition IS NULL OR l.partition = :partition)
          AND h.observed_at BETWEEN :low AND :high
    """
    rows = conn.execute(
        _partition_rows(arm, "1, 2"),
        {"cluster": cluster, "topic": topic, "partition": partition, "low": low, "high": high},
    )
    return tuple(PartitionPoint(cluster, topic, *row) for row in rows)


# A merged partition history row (h) that no recent row replaces (store.recent)
_PARTITION_NOT_REPLACED = """
    AND NOT EXISTS (
        SELECT 1 FROM partition_offsets_recent AS r
        WHERE r.key_id = h.key_id AND r.observed_at = h.observed_at)
"""


def _partition_rows(arm: str, order: str) -> str:
    """``arm`` (a query of the history rows ``h`` of ``{table}``) over the partition history's two tables
    (store.recent): the recent rows, and the merged rows none of them replaces, ordered by ``order``."""
    recent, merged = (arm.format(table=t) for t in ("partition_offsets_recent", "partition_offsets_history"))
    return f"{recent} UNION ALL {merged} {_PARTITION_NOT_REPLACED} ORDER BY {order}"


def latest_partitions(conn: Connection, cluster: str, topic: str | None) -> tuple[LatestPartition, ...]:
    # Two statements, not "(? IS NULL OR topic = ?)": that form keeps SQLite from searching the
    # (cluster, topic, partition) key on topic, so reading one topic scanned the whole cluster.
    columns = "topic, partition, log_start, log_end, leader, leader_epoch, changed_at, last_seen_at"
    if topic is None:
        rows = conn.execute(
            f"SELECT {columns} FROM latest_partition_offsets WHERE cluster = ? ORDER BY topic, partition",
            (cluster,),
        )
    else:
        rows = conn.execute(
            f"SELECT {columns} FROM latest_partition_offsets WHERE cluster = ? AND topic = ?"
            " ORDER BY partition",
            (cluster, topic),
        )
    return tuple(LatestPartition(cluster, *row) for row in rows)


RangeRow = tuple[str, str, int, int, int, int]  # cluster, topic, partition, at (ms), log_start, log_end


def range_samples(
    conn: Connection, cluster: str | None, since: float | None, until: float | None
) -> list[RangeRow]:
    """Every stored log-range change in ``[since, until]`` (rows with both ends known), by partition
    then time: the samples the pipeline's skip and outside-the-log rules read."""
    low, high = _bounds(since, until)
    arm = """
        SELECT l.cluster, l.topic, l.partition, CAST(round(h.observed_at * 1000) AS BIGINT),
               h.log_start, h.log_end
        FROM latest_partition_offsets AS l JOIN {table} AS h ON h.key_id = l.id
        WHERE (:cluster IS NULL OR l.cluster = :cluster) AND h.observed_at BETWEEN :low AND :high
          AND h.log_start IS NOT NULL AND h.log_end IS NOT NULL
    """
    rows = conn.execute(_partition_rows(arm, "1, 2, 3, 4"), {"cluster": cluster, "low": low, "high": high})
    return [tuple(row) for row in rows]


def partition_at(
    conn: Connection, cluster: str, topic: str, partition: int, at: float
) -> PartitionPoint | None:
    # The newest row of each of the history's two tables (store.recent); the recent one wins a tie.
    arm = """
        SELECT * FROM (
            SELECT {rank} AS merged, h.observed_at, h.log_start, h.log_end, h.leader, h.leader_epoch
            FROM latest_partition_offsets AS l JOIN {table} AS h ON h.key_id = l.id
            WHERE l.cluster = :cluster AND l.topic = :topic AND l.partition = :partition
              AND h.observed_at <= :at
            ORDER BY h.observed_at DESC
            LIMIT 1
        ) AS {table}_newest
    """
    row = conn.execute(
        "SELECT observed_at, log_start, log_end, leader, leader_epoch FROM ("
        + arm.format(rank=0, table="partition_offsets_recent")
        + " UNION ALL "
        + arm.format(rank=1, table="partition_offsets_history")
        + ") AS newest ORDER BY observed_at DESC, merged LIMIT 1",
        {"cluster": cluster, "topic": topic, "partition": partition, "at": at},
    ).fetchone()
    return None if row is None else PartitionPoint(cluster, topic, partition, *row)


def log_end_reached_at(
    conn: Connection, cluster: str, topic: str, partition: int, offset: int, until: float | None
) -> float | None:
    # Only the current run counts: if the log end later fell below `offset` again (truncation, topic
    # re-created), the earlier crossing says nothing about when today's records were written.
    # The history's two tables (store.recent): the recent rows, and the merged rows none of them replaces.
    row = conn.execute(
        """
        WITH k AS (
            SELECT id FROM latest_partition_offsets
            WHERE cluster = :cluster AND topic = :topic AND partition = :partition
        ), h AS (
            SELECT observed_at, log_end FROM partition_offsets_recent
            WHERE key_id = (SELECT id FROM k) AND observed_at <= :until
            UNION ALL
            SELECT observed_at, log_end FROM partition_offsets_history AS h
            WHERE key_id = (SELECT id FROM k) AND observed_at <= :until
        """
        + _PARTITION_NOT_REPLACED
        + """
        )
        SELECT min(observed_at) FROM h
        WHERE log_end >= :offset
          AND observed_at > coalesce((SELECT max(observed_at) FROM h WHERE log_end < :offset), :far_past)
        """,
        {
            "cluster": cluster,
            "topic": topic,
            "partition": partition,
            "until": _FAR_FUTURE if until is None else until,
            "offset": offset,
            "far_past": _FAR_PAST,
        },
    ).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def clusters(conn: Connection) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT cluster FROM latest_committed UNION SELECT cluster FROM latest_partition_offsets ORDER BY 1"
    )
    return tuple(row[0] for row in rows)


def groups(conn: Connection, cluster: str) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT DISTINCT grp FROM latest_committed WHERE cluster = ? ORDER BY grp", (cluster,)
    )
    return tuple(row[0] for row in rows)


def tail_positions(conn: Connection, cluster: str, partition: int | None) -> tuple[TailPosition, ...]:
    rows = conn.execute(
        "SELECT partition, next_offset, updated_at FROM tail_positions"
        " WHERE cluster = ? AND (? IS NULL OR partition = ?) ORDER BY partition",
        (cluster, partition, partition),
    )
    return tuple(TailPosition(cluster, *row) for row in rows)
