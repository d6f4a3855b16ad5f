"""The alert counters behind ``/metrics`` (firing alerts, incidents, messages replayed / skipped / lost),
counted at a version of the alerts so that a store reads them again only once the alerts have changed."""

from __future__ import annotations

import threading
from typing import NamedTuple

import store.alert_retention as alert_retention
from store.alert_records import Alert, not_drill_sql
from store.db import Connection
from store.per_file import PerFile
from store.settings import StoreSettings


class Counts(NamedTuple):
    version: int  # of the alerts they were counted at (store.alerts.AlertStore._counters)
    firing: dict[tuple[str, str, str], int]  # by (kind, severity, cluster), drills left out
    incidents: dict[tuple[str, str], int]  # by (kind, cluster), the pruned alerts' included
    magnitudes: dict[tuple[str, str], int]  # by (replayed | skipped | lost, cluster), the pruned included


def count_alerts(c: Connection, version: int) -> Counts:
    """The three counters, read on ``c`` (each query scans every alert kept)."""
    sql = (
        "SELECT kind, severity, cluster, COUNT(*) FROM alerts"
        f" WHERE status = 'firing' AND {not_drill_sql(c.dialect)} GROUP BY 1, 2, 3"
    )
    firing = {(k, s, cl): int(n) for k, s, cl, n in c.execute(sql)}
    incidents = {(k, cl): int(n) for k, cl, n in c.execute(alert_retention.incident_totals(c.dialect))}
    magnitudes: dict[tuple[str, str], int] = {}
    for cluster, replayed, skipped, lost in c.execute(alert_retention.magnitude_totals(c.dialect)):
        magnitudes[("replayed", cluster)] = int(replayed)
        magnitudes[("skipped", cluster)] = int(skipped)
        magnitudes[("lost", cluster)] = int(lost)
    return Counts(version, firing, incidents, magnitudes)


def same_message_totals(old: Alert | None, new: Alert) -> bool:
    """``new`` (a silent refresh of the firing ``old``: severity, status and occurrences as they were)
    leaves the messages replayed / skipped / lost summed as they were."""
    if old is None:
        return False
    was, now = old.magnitude_total, new.magnitude_total
    return all(was.get(m) == now.get(m) for m in alert_retention.MESSAGE_TOTALS)


class WriteCount:
    """Committed write transactions of the alert stores on one SQLite file in this process (a SQLite store
    is one process's file; on PostgreSQL the change counter :data:`store.changes.ALERTS` is the version)."""

    def __init__(self) -> None:
        self.n = 0
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self.n += 1


_WRITES = PerFile(WriteCount)


def file_writes(settings: StoreSettings | None) -> WriteCount:
    """The write count of the file ``settings`` names, shared by the alert stores on it (however its path
    is spelled); a store without settings has its own."""
    return WriteCount() if settings is None else _WRITES.of(settings.path)
