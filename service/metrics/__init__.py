"""Prometheus metrics: one custom collector over the latest snapshot (docs/metrics.md lists the families).

Built by the app factory (:meth:`MetricsEndpoint.build`); nothing registers at import time.
"""

from service.metrics.collector import OffsetguardCollector, build_registry, pinned
from service.metrics.endpoint import MetricsEndpoint
from service.metrics.exposition import Rendered, render
from service.metrics.options import FAMILY_SETS, GRANULARITIES, FamilySet, Granularity, MetricsOptions
from service.metrics.sources import (
    AlertCounts,
    ClusterInputs,
    ScrapeInputs,
    TailFiguresLike,
    TailLike,
    inputs_from_runtime,
)

__all__ = [
    "FAMILY_SETS",
    "GRANULARITIES",
    "AlertCounts",
    "ClusterInputs",
    "FamilySet",
    "Granularity",
    "MetricsEndpoint",
    "MetricsOptions",
    "OffsetguardCollector",
    "Rendered",
    "ScrapeInputs",
    "TailFiguresLike",
    "TailLike",
    "build_registry",
    "inputs_from_runtime",
    "pinned",
    "render",
]
