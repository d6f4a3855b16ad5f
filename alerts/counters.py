"""Broker counters the detectors compare across scrapes, and the metric names they read.

The names match :mod:`collectors.broker_metrics` (a test holds them equal); that module is not imported
here because it does HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping

from alerts.state import MetricKey, metric_key
from collectors.model import BrokerMetrics, MetricsObservation

UNCLEAN_ELECTIONS = "kafka_controller_controllerstats_uncleanleaderelections_total"
FETCH_ERRORS = "kafka_network_requestmetrics_errors_total"
OUT_OF_RANGE = (("error", "OFFSET_OUT_OF_RANGE"), ("request", "Fetch"))
CLEANER_SINCE_LAST_RUN = "kafka_log_logcleanermanager_time_since_last_run_ms"
CLEANER_DIRTY_PERCENT = "kafka_log_logcleanermanager_max_dirty_percent"
CLEANER_UNCLEANABLE = "kafka_log_logcleanermanager_uncleanable_partitions_count"
CLEANER_DEAD_THREADS = "kafka_log_logcleaner_deadthreadcount"

COUNTERS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (UNCLEAN_ELECTIONS, ()),
    (FETCH_ERRORS, OUT_OF_RANGE),
)


def broker_name(b: BrokerMetrics) -> str:
    return str(b.broker_id) if b.broker_id is not None else b.url


def counter_values(metrics: MetricsObservation | None) -> dict[MetricKey, float]:
    """The tracked counters of every scraped broker, to keep in the state."""
    out: dict[MetricKey, float] = {}
    for b in metrics.brokers if metrics else ():
        for name, labels in COUNTERS:
            value = b.value(name, **dict(labels))
            if value is not None:
                out[metric_key(b.broker_id, b.url, name, labels)] = value
    return out


def unclean_counter_seen_at(
    previous_seen_at: float | None, metrics: MetricsObservation | None
) -> float | None:
    """When a scrape last reported the unclean-election counter (this one's time, if it does)."""
    if metrics is not None and any(b.value(UNCLEAN_ELECTIONS) is not None for b in metrics.brokers):
        return metrics.observed_at
    return previous_seen_at


def counter_increases(
    previous: Mapping[MetricKey, float],
    metrics: MetricsObservation | None,
    name: str,
    labels: tuple[tuple[str, str], ...] = (),
) -> dict[str, float]:
    """Per broker: how much ``name`` rose since the previous scrape (after a restart: its whole value).

    A broker seen for the first time has no baseline and contributes nothing.
    """
    out: dict[str, float] = {}
    current = counter_values(metrics)
    for key, value in current.items():
        if key.name != name or key.labels != labels:
            continue
        before = previous.get(key)
        if before is None:
            continue
        rise = value - before if value >= before else value
        if rise > 0:
            out[key.broker] = rise
    return out
