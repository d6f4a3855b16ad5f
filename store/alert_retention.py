"""Expiry of resolved alerts (``store.alerts_retention_days``): SQL for :meth:`AlertStore.prune`.

An alert goes with its transitions and its notification rows once it has been resolved for longer than
the retention; a firing alert never goes, whatever its age, nor one with a notification still pending
(the dispatcher would deliver it about an alert the API no longer knows). Silences match alerts by
labels, not by id, so none is tied to an alert and none is deleted here; acknowledgements are columns of
the alert row. Before the rows go, what they counted is added to ``alert_totals_pruned`` (migration 8),
which the incident and magnitude counters of ``/metrics`` add back: deleting never makes a counter fall.

Work is split into chunks of at most :data:`ALERTS_PER_CHUNK` alerts, one transaction each, so the
caller can release the write lock between them and a first prune of a long history never holds up
detection for the whole pass. The alerts of a cluster are found through the
``alerts_resolved_by_cluster`` index (cluster, status, resolved_at), so a chunk costs the rows it deletes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from store.alert_records import RESOLVED, not_drill_sql
from store.db import Connection
from store.dialect import Dialect
from store.notification_records import PENDING

ALERTS_PER_CHUNK = 500

_EXPIRED = """
    SELECT id FROM alerts AS a
    WHERE cluster = :cluster AND status = :resolved AND resolved_at < :cutoff
      AND NOT EXISTS (SELECT 1 FROM notifications AS n WHERE n.alert_id = a.id AND n.state = :pending)
    LIMIT :limit
"""
MESSAGE_TOTALS = ("messages_replayed", "messages_skipped", "messages_lost")


def _tally(d: Dialect) -> str:
    sums = ",\n        ".join(
        f"COALESCE(SUM({d.json_number('magnitude_total', m)}), 0)" for m in MESSAGE_TOTALS
    )
    return f"""
    INSERT INTO alert_totals_pruned
        (kind, cluster, occurrences, messages_replayed, messages_skipped, messages_lost)
    SELECT kind, cluster, SUM(occurrences),
        {sums}
    FROM alerts WHERE id IN ({d.json_array_values(":ids")}) AND {not_drill_sql(d)} GROUP BY kind, cluster
    ON CONFLICT (kind, cluster) DO UPDATE SET
        occurrences = alert_totals_pruned.occurrences + excluded.occurrences,
        messages_replayed = alert_totals_pruned.messages_replayed + excluded.messages_replayed,
        messages_skipped = alert_totals_pruned.messages_skipped + excluded.messages_skipped,
        messages_lost = alert_totals_pruned.messages_lost + excluded.messages_lost
"""


def incident_totals(d: Dialect) -> str:
    """Alerts kept and alerts deleted, for the counters of /metrics: (kind, cluster, occurrences)."""
    return f"""
    SELECT kind, cluster, SUM(n) FROM (
        SELECT kind, cluster, occurrences AS n FROM alerts WHERE {not_drill_sql(d)}
        UNION ALL SELECT kind, cluster, occurrences FROM alert_totals_pruned
    ) AS kept_and_pruned GROUP BY 1, 2
"""


def magnitude_totals(d: Dialect) -> str:
    """(cluster, replayed, skipped, lost) over the alerts kept and deleted."""
    replayed, skipped, lost = (f"COALESCE({d.json_number('magnitude_total', m)}, 0)" for m in MESSAGE_TOTALS)
    return f"""
    SELECT cluster, SUM(replayed), SUM(skipped), SUM(lost) FROM (
        SELECT cluster, {replayed} AS replayed, {skipped} AS skipped, {lost} AS lost
        FROM alerts WHERE {not_drill_sql(d)}
        UNION ALL SELECT cluster, messages_replayed, messages_skipped, messages_lost FROM alert_totals_pruned
    ) AS kept_and_pruned GROUP BY cluster
"""


@dataclass(frozen=True, slots=True)
class PrunedAlerts:
    """Rows deleted by one prune (or one chunk of it)."""

    alerts: int = 0
    transitions: int = 0
    notifications: int = 0

    def __add__(self, other: PrunedAlerts) -> PrunedAlerts:
        return PrunedAlerts(
            self.alerts + other.alerts,
            self.transitions + other.transitions,
            self.notifications + other.notifications,
        )


def clusters(conn: Connection) -> list[str]:
    """Every cluster with a stored alert (by the ``alerts_by_cluster`` index)."""
    return [r[0] for r in conn.execute("SELECT DISTINCT cluster FROM alerts ORDER BY cluster")]


def prune_chunk(conn: Connection, cluster: str, cutoff: float, limit: int = ALERTS_PER_CHUNK) -> PrunedAlerts:
    """Delete at most ``limit`` of ``cluster``'s alerts resolved before ``cutoff``, with their transitions
    and notification rows, inside the caller's transaction; fewer than ``limit`` means none is left."""
    chosen = conn.execute(
        _EXPIRED,
        {"cluster": cluster, "resolved": RESOLVED, "cutoff": cutoff, "pending": PENDING, "limit": limit},
    ).fetchall()
    if not chosen:
        return PrunedAlerts()
    ids = {"ids": json.dumps([r[0] for r in chosen])}
    d = conn.dialect
    chosen_ids = d.json_array_values(":ids")
    conn.execute(_tally(d), ids)
    transitions = conn.execute(
        f"DELETE FROM alert_transitions WHERE alert_id IN ({chosen_ids})", ids
    ).rowcount
    notifications = conn.execute(f"DELETE FROM notifications WHERE alert_id IN ({chosen_ids})", ids).rowcount
    alerts = conn.execute(f"DELETE FROM alerts WHERE id IN ({chosen_ids})", ids).rowcount
    return PrunedAlerts(alerts, transitions, notifications)
