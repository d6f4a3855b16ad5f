"""The custom prometheus_client collector: fresh families from one snapshot per scrape.

Fresh, but not written from scratch: the collector keeps what its previous render derived (the lag
rows and log-end crossing times, :class:`~service.metrics.view.ViewMemo`) and wrote (the sample lines of
the bulk families, :mod:`service.metrics.memo`), and reuses them where the inputs did not change; the
bytes are those of a render from scratch.

Register it on a registry the app factory builds (:func:`build_registry`); nothing registers at import
time. ``collect()`` takes its :class:`ScrapeInputs` from :func:`pinned` when the caller pinned a snapshot
(the ``/metrics`` route snapshots on the event loop, then renders in a worker thread), else from the
``source`` it was built with.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from prometheus_client.core import Metric
from prometheus_client.registry import CollectorRegistry

from service.metrics.kafka_exporter import kafka_exporter_families
from service.metrics.lag_exporter import lag_exporter_families
from service.metrics.leader import leader_families
from service.metrics.memo import LineMemo
from service.metrics.operations import (
    alert_families,
    collector_families,
    detection_families,
    reconcile_families,
    tail_families,
)
from service.metrics.options import MetricsOptions
from service.metrics.own import cluster_families, observation_families, own_families
from service.metrics.sources import ScrapeInputs
from service.metrics.store_health import store_families
from service.metrics.view import ViewMemo, cluster_views

Source = Callable[[], ScrapeInputs]

_PINNED: ContextVar[ScrapeInputs | None] = ContextVar("offsetguard_scrape_inputs", default=None)


@contextmanager
def pinned(inputs: ScrapeInputs) -> Iterator[None]:
    """Within the block (and threads started with its context), collectors read ``inputs``."""
    token = _PINNED.set(inputs)
    try:
        yield
    finally:
        _PINNED.reset(token)


class OffsetguardCollector:
    """The offsetguard, kafka_exporter- and kafka-lag-exporter-compatible families ``options`` select, at
    its granularity, and the health and alert families, built per scrape."""

    def __init__(
        self,
        source: Source,
        *,
        clock: Callable[[], float] = time.time,
        options: MetricsOptions | None = None,
    ) -> None:
        self._source = source
        self._clock = clock
        self._options = options or MetricsOptions()
        # what the previous render derived and wrote, reused where its inputs did not change
        self._views = ViewMemo()
        self._lines = LineMemo()
        self._busy = threading.Lock()

    def describe(self) -> list[Metric]:
        # Nothing up front: registering must not read the runtime (it may not exist yet).
        return []

    def collect(self) -> Iterator[Metric]:
        inputs = _PINNED.get() or self._source()
        now = self._clock()
        # the memo serves one render at a time; another one at the same time renders from scratch
        mine = self._busy.acquire(blocking=False)
        try:
            kept, lines = (self._views, self._lines) if mine else (None, None)
            yield from self._families(inputs, now, kept, lines)
        finally:
            if mine:
                self._busy.release()

    def _families(
        self, inputs: ScrapeInputs, now: float, kept: ViewMemo | None, lines: LineMemo | None
    ) -> Iterator[Metric]:
        views = list(cluster_views(inputs, now, kept))
        if lines is not None:
            lines.keep({v.cluster for v in views})
        options = self._options
        if options.exposes("offsetguard"):
            yield from own_families(views, options.granularity, lines)
        yield from observation_families(views)
        yield from cluster_families(views)
        yield from collector_families(inputs.statuses, now, inputs.stale_after_intervals)
        yield from tail_families(inputs.tails)
        yield from detection_families(inputs.evaluations)
        yield from reconcile_families(inputs.reconciles)
        yield from alert_families(inputs.alerts, [c.cluster for c in inputs.clusters])
        yield from store_families(inputs.store)
        yield from leader_families(inputs.leader)
        if options.exposes("kafka_exporter"):
            yield from kafka_exporter_families(views, options.granularity, lines)
        if options.exposes("kafka_lag_exporter"):
            yield from lag_exporter_families(views, options.granularity, lines)


def build_registry(
    source: Source, *, clock: Callable[[], float] = time.time, options: MetricsOptions | None = None
) -> CollectorRegistry:
    """A fresh registry holding only an :class:`OffsetguardCollector` over ``source``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(OffsetguardCollector(source, clock=clock, options=options))
    return registry
