"""Thinning and expiry of the history tables.

Rows newer than the full-resolution horizon are untouched. Older rows are thinned to the last row of
each ``bucket_seconds`` bucket per key. Rows older than the retention horizon are deleted except the
last one of each key before that horizon: that row is the value still in force at the horizon, so
"offsets at T" stays answerable for every T inside the retention window (and a key's newest row is
never deleted).

Work is split into ranges of key ids so the caller can release the writer lock between chunks and
a large history never blocks observations for the whole pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.db import Connection

HISTORY_TABLES = {"committed": "committed_history", "partitions": "partition_offsets_history"}
KEY_TABLES = {"committed": "latest_committed", "partitions": "latest_partition_offsets"}
KEYS_PER_CHUNK = 2_000

# A row goes when a later row of the same key also lies before the horizon. Written as a correlated
# EXISTS so each row costs one seek on the (key_id, observed_at) primary key; the last row before the
# horizon has no such witness and so always survives, however the deletes are ordered.
_EXPIRE = """
    DELETE FROM {history} AS h
    WHERE h.key_id >= :lo AND h.key_id < :hi AND h.observed_at < :cutoff
      AND EXISTS (
          SELECT 1 FROM {history} AS later
          WHERE later.key_id = h.key_id AND later.observed_at > h.observed_at AND later.observed_at < :cutoff)
"""
# Same shape, with the witness limited to the row's own bucket. SQLite's CAST(.. AS INTEGER) truncates,
# which is floor() for positive epoch seconds (PostgreSQL's rounds: floor() there). Buckets are aligned
# to the epoch, not to the cutoff, so a pass repeated later keeps the same survivors (idempotent).
_THIN = """
    DELETE FROM {history} AS h
    WHERE h.key_id >= :lo AND h.key_id < :hi AND h.observed_at < :cutoff
      AND EXISTS (
          SELECT 1 FROM {history} AS later
          WHERE later.key_id = h.key_id AND later.observed_at > h.observed_at
            AND later.observed_at < {least})
"""
_BUCKET_END = "({floor} + 1) * :bucket"


@dataclass(frozen=True, slots=True)
class Horizons:
    """The two cut-offs of one pass, in epoch seconds."""

    full_resolution_since: float
    retained_since: float
    bucket_seconds: int

    @classmethod
    def at(
        cls, now: float, *, full_resolution_hours: float, retention_days: float, bucket_seconds: int
    ) -> Horizons:
        return cls(now - full_resolution_hours * 3600.0, now - retention_days * 86400.0, bucket_seconds)


def deletes_before(horizons: Horizons) -> float:
    """A pass deletes no row at or after this time (both cut-offs lie before it)."""
    return max(horizons.full_resolution_since, horizons.retained_since)


def key_chunks(conn: Connection, kind: str) -> list[tuple[int, int]]:
    """Half-open key id ranges ``[lo, hi)`` covering every key of ``kind`` ("committed"/"partitions")."""
    top = conn.execute(f"SELECT coalesce(max(id), 0) FROM {KEY_TABLES[kind]}").fetchone()[0]
    return [(lo, lo + KEYS_PER_CHUNK) for lo in range(1, int(top) + 1, KEYS_PER_CHUNK)]


def prune_chunk(conn: Connection, kind: str, lo: int, hi: int, horizons: Horizons) -> tuple[int, int]:
    """Expire then thin keys ``[lo, hi)`` of ``kind``; returns (thinned, expired) row counts."""
    history = HISTORY_TABLES[kind]
    expired = conn.execute(
        _EXPIRE.format(history=history), {"lo": lo, "hi": hi, "cutoff": horizons.retained_since}
    ).rowcount
    d = conn.dialect
    floor = "floor(h.observed_at / :bucket)" if d.postgresql else "CAST(h.observed_at / :bucket AS INTEGER)"
    least = d.least(":cutoff", _BUCKET_END.format(floor=floor))
    thinned = conn.execute(
        _THIN.format(history=history, least=least),
        {"lo": lo, "hi": hi, "cutoff": horizons.full_resolution_since, "bucket": horizons.bucket_seconds},
    ).rowcount
    return thinned, expired
