"""Which family sets ``/metrics`` exposes and at which granularity (the ``metrics`` settings).

Family sets: ``offsetguard`` (``offsetguard_group_*``, ``offsetguard_partition_*``), ``kafka_exporter``
(:mod:`service.metrics.kafka_exporter`) and ``kafka_lag_exporter`` (:mod:`service.metrics.lag_exporter`).
offsetguard's health and alert families (collectors, tail, alerts, observation timestamps) are always
exposed: the shipped rules and ``/readyz``-style alerting read them.

Granularity (docs/metrics.md, "Choosing families and granularity"): ``partition`` exposes every family as
it is; ``topic`` replaces per-partition series by aggregates per group and topic (per topic for
partition log offsets); ``group`` by aggregates per group. Pure data: no Prometheus import here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FamilySet = Literal["offsetguard", "kafka_exporter", "kafka_lag_exporter"]
Granularity = Literal["partition", "topic", "group"]

FAMILY_SETS: tuple[FamilySet, ...] = ("offsetguard", "kafka_exporter", "kafka_lag_exporter")
GRANULARITIES: tuple[Granularity, ...] = ("partition", "topic", "group")
# What the settings expose by default: offsetguard's own families, which the shipped dashboard and rules
# read. The compatible sets are opt-in: at 50,000 group-partitions they add 57 MB to every scrape.
DEFAULT_FAMILIES: tuple[FamilySet, ...] = ("offsetguard",)


@dataclass(frozen=True, slots=True)
class MetricsOptions:
    """Every family set per partition (the service's *settings* default to :data:`DEFAULT_FAMILIES`)."""

    families: frozenset[FamilySet] = field(default_factory=lambda: frozenset(FAMILY_SETS))
    granularity: Granularity = "partition"

    def exposes(self, family_set: FamilySet) -> bool:
        return family_set in self.families
