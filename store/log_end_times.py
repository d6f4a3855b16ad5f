"""Batched "when did the log end reach this offset": many partitions in one statement, for lag in seconds.

Same answer as :func:`store.queries.log_end_reached_at` (without ``until``) for each request, but
one SQL statement for all of them, so a scrape over 50,000 lagging partitions is one round trip. Per
request, the newest history row whose log end is still below the offset is found by walking the
``(key_id, observed_at)`` primary key backwards from the newest row (of each of the history's two tables,
:mod:`store.recent`); the answer is the row right after it. The cost follows the rows observed since the
crossing, not the whole history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from store.db import Connection

# (topic, partition, offset) -> epoch seconds of the first observation of the current run whose log end
# had reached ``offset``
Wanted = tuple[str, int, int]

# Over the history's two tables (store.recent): the recent rows, and the merged rows none of them
# replaces; each side walked through its own (key_id, observed_at) primary key, the two answers combined
# (max of the two "below" times, min of the two crossings).
_BELOW = """
    SELECT b.observed_at FROM {table} AS b
    WHERE b.key_id = l.id AND b.log_end < req.want{replaced}
    ORDER BY b.observed_at DESC LIMIT 1
"""
_CROSSED = """
    SELECT h.observed_at FROM {table} AS h
    WHERE h.key_id = lim.id AND h.log_end >= lim.want
      AND h.observed_at > coalesce(lim.below, -1e308){replaced}
    ORDER BY h.observed_at LIMIT 1
"""
_REPLACED = """
      AND NOT EXISTS (SELECT 1 FROM partition_offsets_recent AS r
                      WHERE r.key_id = {alias}.key_id AND r.observed_at = {alias}.observed_at)"""


def _both(query: str, alias: str) -> str:
    """``query`` over each table, as two rows of one column ``t`` (NULL where a table has no answer)."""
    merged = query.format(table="partition_offsets_history", replaced=_REPLACED.format(alias=alias))
    recent = query.format(table="partition_offsets_recent", replaced="")
    return f"SELECT ({merged}) AS t UNION ALL SELECT ({recent}) AS t"


# Per request, its partition's key id and the newest time its log end was below the offset. MATERIALIZED,
# here and below: inlined (SQLite flattens subqueries) each time would be computed once per use.
_BELOW_EACH = f"""
    SELECT req.topic AS topic, req.partition AS partition, req.want AS want, l.id AS id, (
        SELECT max(t) FROM ({_both(_BELOW, "b")}) AS below
    ) AS below
    {{requests}}
"""
_ANSWERS = f"""
    SELECT lim.topic AS topic, lim.partition AS partition, lim.want AS want, (
        SELECT min(t) FROM ({_both(_CROSSED, "h")}) AS crossed
    ) AS at
    FROM lim
"""

# CROSS JOIN keeps the requests as the outer loop: one unique-index probe per request instead of a scan of
# the requests for every partition of the cluster.
_REQUESTS = """
    FROM (
        SELECT value ->> 0 AS topic, value ->> 1 AS partition, value ->> 2 AS want FROM json_each(?)
    ) AS req CROSS JOIN latest_partition_offsets AS l
    WHERE l.cluster = ? AND l.topic = req.topic AND l.partition = req.partition
"""
# The answers as one JSON text (one row): Python's sqlite3 gives up the GIL for every row it steps to, and
# regaining it while another thread computes costs up to a switch interval (5 ms) a row, so 50,000 rows
# read beside a busy detection thread took seconds. Times as 17 significant digits (JSON's 15 lose them).
_ONE_ROW = f"""
WITH lim AS MATERIALIZED ({_BELOW_EACH.format(requests=_REQUESTS)}), answers AS MATERIALIZED ({_ANSWERS})
SELECT json_group_array(json_array(topic, partition, want, printf('%!.17g', at)))
FROM answers WHERE at IS NOT NULL
"""

# The same on PostgreSQL: the requests from jsonb (typed: ->> gives text), the rows as they are.
_PG_REQUESTS = """
    FROM (
        SELECT r ->> 0 AS topic, (r ->> 1)::bigint AS partition, (r ->> 2)::bigint AS want
        FROM jsonb_array_elements(?::jsonb) AS r
    ) AS req JOIN latest_partition_offsets AS l
      ON l.cluster = ? AND l.topic = req.topic AND l.partition = req.partition
"""
_PG_QUERY = f"WITH lim AS MATERIALIZED ({_BELOW_EACH.format(requests=_PG_REQUESTS)}) {_ANSWERS}"


def log_end_reached_at_many(conn: Connection, cluster: str, wanted: Iterable[Wanted]) -> dict[Wanted, float]:
    """Answers for the requests that have one; a request the history cannot answer is left out."""
    requests = sorted(set(wanted))
    if not requests:
        return {}
    if conn.dialect.postgresql:  # rows as they are: psycopg reads them all in one call, in C
        rows = conn.execute(_PG_QUERY, (json.dumps(requests), cluster)).fetchall()
        return {
            (topic, int(partition), int(want)): float(at)
            for topic, partition, want, at in rows
            if at is not None
        }
    [(answers,)] = conn.execute(_ONE_ROW, (json.dumps(requests), cluster)).fetchall()
    rows = json.loads(answers)
    return {(topic, int(partition), int(want)): float(at) for topic, partition, want, at in rows}
