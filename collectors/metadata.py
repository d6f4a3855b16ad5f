"""Cluster metadata: brokers, controller, and every partition's leader, leader epoch, replicas and ISR."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from collectors.model import ClusterMetadata, Failure
from collectors.seam import KafkaSeam


class MetadataCollector:
    """Collects :class:`ClusterMetadata` with one Metadata request (any live broker answers).

    Also the metadata source of the other collectors: :meth:`latest` reuses a recent observation so a cycle
    of five collectors asks for metadata once, not five times.
    """

    name = "metadata"

    def __init__(self, seam: KafkaSeam, cluster: str, clock: Callable[[], float] = time.time) -> None:
        self.cluster = cluster
        self._seam = seam
        self._clock = clock
        self._last: ClusterMetadata | None = None
        self._lock = asyncio.Lock()

    async def collect(self) -> ClusterMetadata:
        """A fresh observation; raises :class:`collectors.errors.KafkaError` if no broker answered."""
        observed_at = self._clock()
        snapshot = await asyncio.to_thread(self._seam.metadata)
        failures = tuple(
            Failure(
                "partition", f"{p.topic}/{p.partition}", "NoLeader", f"partition has no leader ({p.error})"
            )
            for t in snapshot.topics
            for p in t.partitions
            if p.leader is None
        )
        observed = ClusterMetadata(
            cluster=self.cluster,
            observed_at=observed_at,
            cluster_id=snapshot.cluster_id,
            controller_id=snapshot.controller_id,
            brokers=snapshot.brokers,
            topics=snapshot.topics,
            failures=failures,
        )
        self._last = observed
        return observed

    async def latest(self, max_age_s: float = 5.0) -> ClusterMetadata:
        """The last observation if younger than ``max_age_s`` seconds, else a fresh one."""
        async with self._lock:  # concurrent callers share one request
            last = self._last
            if last is not None and self._clock() - last.observed_at <= max_age_s:
                return last
            return await self.collect()
