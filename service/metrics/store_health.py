"""The store's health families (``offsetguard_store_*``): whether its writes succeed, what failed, what is
kept in memory meanwhile. Exposed whatever the settings, from :class:`StoreFigures` read at scrape time."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from store.health import HealthView


@dataclass(frozen=True, slots=True)
class StoreFigures:
    """The store's :class:`HealthView` and what waits in memory to be written, by kind."""

    health: HealthView
    backlog: Mapping[str, int] = field(default_factory=dict)  # "alert_writes", "notifications"


def store_families(figures: StoreFigures | None) -> Iterator[Metric]:
    """No families without a store."""
    if figures is None:
        return
    h = figures.health
    healthy = GaugeMetricFamily(
        "offsetguard_store_healthy", "1 while the store takes writes, 0 while the disk refuses them."
    )
    healthy.add_metric([], 1 if h.healthy else 0)
    failures = CounterMetricFamily(
        "offsetguard_store_write_failures_total",
        "Store writes the disk refused (full, read-only, I/O error).",
    )
    failures.add_metric([], h.write_failures)
    dropped = CounterMetricFamily(
        "offsetguard_store_dropped_history_rows_total",
        "History rows given up while the store refused writes (alerts and notifications are kept).",
    )
    dropped.add_metric([], h.dropped_rows)
    backlog = GaugeMetricFamily(
        "offsetguard_store_backlog", "Writes kept in memory until the store takes them.", labels=["kind"]
    )
    for kind, n in sorted(figures.backlog.items()):
        backlog.add_metric([kind], n)
    yield from (healthy, failures, dropped, backlog)
