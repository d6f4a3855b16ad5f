"""offsetguard's own families about itself: collectors, the ``__consumer_offsets`` tail and alerts."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from alerts.model import ALERT_KINDS
from collectors.errors import OffsetguardError
from service.metrics.sources import AlertCounts, ReconcileFigures, StatusLike, TailFiguresLike

log = logging.getLogger(__name__)

MAGNITUDES = ("replayed", "skipped", "lost")  # names AlertCounts.magnitude_totals() may use


def collector_families(statuses: Sequence[StatusLike], now: float, stale_after: float) -> Iterator[Metric]:
    """Runs, failures, last duration, last success and staleness of every scheduled collector."""
    labels = ["cluster", "collector"]
    runs = CounterMetricFamily("offsetguard_collector_runs_total", "Collector runs.", labels=labels)
    failures = CounterMetricFamily(
        "offsetguard_collector_failures_total", "Collector runs that failed.", labels=labels
    )
    duration = GaugeMetricFamily(
        "offsetguard_collector_last_duration_seconds", "Duration of the last run.", labels=labels
    )
    success = GaugeMetricFamily(
        "offsetguard_collector_last_success_timestamp_seconds",
        "When the last successful run started (epoch seconds); absent before the first one.",
        labels=labels,
    )
    stale = GaugeMetricFamily(
        "offsetguard_collector_stale",
        "1 when the collector never succeeded or its last success is too old (as /readyz), else 0.",
        labels=labels,
    )
    for s in statuses:
        key = [s.cluster, s.name]
        runs.add_metric(key, s.runs)
        failures.add_metric(key, s.failures)
        if s.last_duration is not None:
            duration.add_metric(key, s.last_duration)
        if s.last_success_at is not None:
            success.add_metric(key, s.last_success_at)
        stale.add_metric(key, 1 if s.stale(now, stale_after) else 0)
    yield from (runs, failures, duration, success, stale)


def tail_families(tails: Sequence[TailFiguresLike]) -> Iterator[Metric]:
    """The live tail's throughput, lag per ``__consumer_offsets`` partition and error counts."""
    c = ["cluster"]
    rate = GaugeMetricFamily(
        "offsetguard_tail_records_per_second", "Records read per second, recent.", labels=c
    )
    lag = GaugeMetricFamily(
        "offsetguard_tail_lag_records",
        "Records of the __consumer_offsets partition not yet delivered to detection.",
        labels=["cluster", "partition"],
    )
    caught_up = GaugeMetricFamily(
        "offsetguard_tail_caught_up", "1 once the tail reached the end offsets seen at start.", labels=c
    )
    records = CounterMetricFamily("offsetguard_tail_records_total", "Raw records read.", labels=c)
    unknown = CounterMetricFamily(
        "offsetguard_tail_unknown_records_total", "Records of an unknown type, skipped.", labels=c
    )
    decode = CounterMetricFamily(
        "offsetguard_tail_decode_errors_total", "Records that failed to decode, skipped.", labels=c
    )
    fetch = CounterMetricFamily("offsetguard_tail_fetch_errors_total", "Failed fetches.", labels=c)
    for t in tails:
        rate.add_metric([t.cluster], t.records_per_second)
        for partition, value in sorted(t.lag.items()):
            lag.add_metric([t.cluster, str(partition)], value)
        caught_up.add_metric([t.cluster], 1 if t.caught_up else 0)
        records.add_metric([t.cluster], t.records_total)
        unknown.add_metric([t.cluster], t.unknown_records)
        decode.add_metric([t.cluster], t.decode_errors)
        fetch.add_metric([t.cluster], t.fetch_errors)
    yield from (rate, lag, caught_up, records, unknown, decode, fetch)


def detection_families(evaluations: Sequence[tuple[str, int]]) -> Iterator[Metric]:
    """Detection evaluations completed per cluster: one that ends after a change has judged it."""
    total = CounterMetricFamily(
        "offsetguard_detection_evaluations_total", "Detection evaluations completed.", labels=["cluster"]
    )
    for cluster, n in evaluations:
        total.add_metric([cluster], n)
    yield total


def reconcile_families(reconciles: Sequence[ReconcileFigures]) -> Iterator[Metric]:
    """The committed-offsets polls that reconciled the tail's view, and the differences they found (each
    one something the tail missed or got wrong); nothing when no cluster's committed offsets come from a
    live tail (``tail.enabled: false``, an ha standby)."""
    if not reconciles:
        return
    c = ["cluster"]
    runs = CounterMetricFamily(
        "offsetguard_reconcile_runs_total",
        "Committed-offsets polls compared with the committed offsets the live tail reported.",
        labels=c,
    )
    differences = CounterMetricFamily(
        "offsetguard_reconcile_differences_total",
        "Committed offsets on which a reconciling poll and the live tail disagreed (missed commit, "
        "missed tombstone or a different value), corrected from the poll.",
        labels=c,
    )
    for cluster, n_runs, n_differences in reconciles:
        runs.add_metric([cluster], n_runs)
        differences.add_metric([cluster], n_differences)
    yield from (runs, differences)


def alert_families(alerts: AlertCounts | None, clusters: Sequence[str] = ()) -> Iterator[Metric]:
    """Firing alerts, incident totals and messages replayed/skipped/lost; nothing without an alert store.

    The counters start at 0 for every configured cluster and kind, so ``increase()`` sees the first
    incident instead of a series that appears already above zero.
    """
    if alerts is None:
        return
    try:  # blocking store reads: this runs on the metrics thread
        firing_counts = alerts.firing_counts()
        incident_totals = alerts.incident_totals()
        magnitude_totals = alerts.magnitude_totals()
    except OffsetguardError as exc:  # the rest of the scrape is still worth having
        log.warning("metrics: alert counts unavailable: %s", exc)
        return
    firing = GaugeMetricFamily(
        "offsetguard_alerts_firing",
        "Alerts firing now.",
        labels=["cluster", "kind", "severity"],
    )
    for (kind, severity, cluster), n in sorted(firing_counts.items()):
        firing.add_metric([cluster, kind, severity], n)
    incidents = CounterMetricFamily(
        "offsetguard_incidents_total", "Incidents opened, by kind.", labels=["cluster", "kind"]
    )
    zero_incidents = {(kind, cluster): 0 for cluster in clusters for kind in ALERT_KINDS}
    for (kind, cluster), n in sorted({**zero_incidents, **incident_totals}.items()):
        incidents.add_metric([cluster, kind], n)
    magnitudes = {
        name: CounterMetricFamily(
            f"offsetguard_messages_{name}_total", f"Messages {name} by incidents.", labels=["cluster"]
        )
        for name in MAGNITUDES
    }
    zero_magnitudes = {(name, cluster): 0 for cluster in clusters for name in MAGNITUDES}
    for (name, cluster), n in sorted({**zero_magnitudes, **magnitude_totals}.items()):
        if name in magnitudes:
            magnitudes[name].add_metric([cluster], n)
    yield from (firing, incidents, *magnitudes.values())
