"""Batched "when did the log end reach this offset": many partitions in one statement, for lag in seconds.

Same answer as :func:`store.queries.log_end_reached_at` (without ``until``) for each request, but
one SQL statement for all of them, so a scrape over 50,000 lagging partitions is one round trip. Per
request, the newest history row whose log end is still below the offset is found by walking the
``(key_id, observed_at)`` primary key backwards from the newest row; the answer is the row right after
it. The cost follows the rows observed since the crossing, not the whole history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from store.db import Connection

# (topic, partition, offset) -> epoch seconds of the first observation of the current run whose log end
# had reached ``offset``
Wanted = tuple[str, int, int]

_QUERY = """
WITH req AS (
    SELECT value ->> 0 AS topic, value ->> 1 AS partition, value ->> 2 AS want FROM json_each(?)
)
SELECT req.topic AS topic, req.partition AS partition, req.want AS want, (
    SELECT h.observed_at FROM partition_offsets_history AS h
    WHERE h.key_id = l.id AND h.log_end >= req.want AND h.observed_at > coalesce((
        SELECT b.observed_at FROM partition_offsets_history AS b
        WHERE b.key_id = l.id AND b.log_end < req.want
        ORDER BY b.observed_at DESC LIMIT 1
    ), -1e308)
    ORDER BY h.observed_at LIMIT 1
) AS at
-- CROSS JOIN keeps the requests as the outer loop: one unique-index probe per request instead of a
-- scan of the requests for every partition of the cluster.
FROM req CROSS JOIN latest_partition_offsets AS l
WHERE l.cluster = ? AND l.topic = req.topic AND l.partition = req.partition
"""


# The answers as one JSON text (one row): Python's sqlite3 gives up the GIL for every row it steps to, and
# regaining it while another thread computes costs up to a switch interval (5 ms) a row, so 50,000 rows
# read beside a busy detection thread took seconds. Times as 17 significant digits (JSON's 15 lose them).
_ONE_ROW = f"""
SELECT json_group_array(json_array(topic, partition, want, printf('%!.17g', at)))
FROM ({_QUERY}) WHERE at IS NOT NULL
"""

# The same on PostgreSQL: the requests from jsonb (typed: ->> gives text), a LATERAL join for the answer.
_PG_QUERY = """
WITH req AS (
    SELECT r ->> 0 AS topic, (r ->> 1)::bigint AS partition, (r ->> 2)::bigint AS want
    FROM jsonb_array_elements(?::jsonb) AS r
)
SELECT req.topic, req.partition, req.want, (
    SELECT h.observed_at FROM partition_offsets_history AS h
    WHERE h.key_id = l.id AND h.log_end >= req.want AND h.observed_at > coalesce((
        SELECT b.observed_at FROM partition_offsets_history AS b
        WHERE b.key_id = l.id AND b.log_end < req.want
        ORDER BY b.observed_at DESC LIMIT 1
    ), -1e308)
    ORDER BY h.observed_at LIMIT 1
) AS at
FROM req JOIN latest_partition_offsets AS l
  ON l.cluster = ? AND l.topic = req.topic AND l.partition = req.partition
"""


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
