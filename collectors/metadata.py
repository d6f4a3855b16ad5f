"""Cluster metadata: brokers, controller, and every partition's leader, leader epoch, replicas and ISR."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from operator import is_

from collectors.model import OFFSETS_TOPIC, ClusterMetadata, Failure, TopicInfo
from collectors.scope import EVERYTHING, Scope
from collectors.seam import KafkaSeam


class MetadataCollector:
    """Collects :class:`ClusterMetadata` with one Metadata request (any live broker answers).

    Also the metadata source of the other collectors: :meth:`latest` reuses a recent observation so a cycle
    of five collectors asks for metadata once, not five times. Topics out of ``scope`` are left out (and
    counted), so no collector asks about them; ``__consumer_offsets`` itself stays whatever the scope:
    it holds every group's offsets, and its partition count and health are offsetguard's own concern.
    """

    name = "metadata"

    def __init__(
        self,
        seam: KafkaSeam,
        cluster: str,
        clock: Callable[[], float] = time.time,
        *,
        scope: Scope = EVERYTHING,
    ) -> None:
        self.cluster = cluster
        self.scope = scope
        self._seam = seam
        self._clock = clock
        self._last: ClusterMetadata | None = None
        self._pending: asyncio.Future[ClusterMetadata] | None = None  # the request under way

    async def collect(self) -> ClusterMetadata:
        """A new observation: a new Metadata request, or the one under way (the scheduler's run and the
        other collectors' :meth:`latest` at a start, all at once, share one: at 20,000 partitions each is
        a second of a broker's time and of decoding). A caller that joins a request under way gets its
        answer, ``observed_at`` the moment that request was sent: up to one request's time before the
        call. Raises :class:`collectors.errors.KafkaError` if no broker answered."""
        pending = self._pending
        if pending is None:
            pending = self._pending = asyncio.ensure_future(self._request())
            pending.add_done_callback(_retrieved)
        # shielded: a caller cancelled (a stopping scheduler) does not cancel the others' request
        return await asyncio.shield(pending)

    async def _request(self) -> ClusterMetadata:
        try:
            observed_at = self._clock()
            snapshot = await asyncio.to_thread(self._seam.metadata)
        finally:
            self._pending = None  # a collect from now on asks again
        topics, excluded = self._in_scope(snapshot.topics)
        last = self._last
        if last is not None and len(topics) == len(last.topics) and all(map(is_, topics, last.topics)):
            # No topic changed (the decoder hands an unchanged topic's TopicInfo again): the very tuple of
            # the last observation, so what is built of its partitions (detection's points and indexes,
            # the /metrics epoch rows) is known unchanged by one identity test, not rebuilt every interval.
            topics, failures = last.topics, last.failures
        else:
            failures = tuple(
                Failure(
                    "partition",
                    f"{p.topic}/{p.partition}",
                    "NoLeader",
                    f"partition has no leader ({p.error})",
                )
                for t in topics
                for p in t.partitions
                if p.leader is None
            )
        observed = ClusterMetadata(
            cluster=self.cluster,
            observed_at=observed_at,
            cluster_id=snapshot.cluster_id,
            controller_id=snapshot.controller_id,
            brokers=snapshot.brokers,
            topics=topics,
            failures=failures,
            excluded_topics=excluded,
        )
        self._last = observed
        return observed

    def _in_scope(self, topics: tuple[TopicInfo, ...]) -> tuple[tuple[TopicInfo, ...], int]:
        scope = self.scope
        if scope.everything:
            return topics, 0
        kept = tuple(t for t in topics if t.name == OFFSETS_TOPIC or scope.topic_in(t.name))
        return kept, len(topics) - len(kept)

    async def latest(self, max_age_s: float = 5.0) -> ClusterMetadata:
        """The last observation if younger than ``max_age_s`` seconds, else a fresh one (concurrent callers
        share one request)."""
        last = self._last
        if last is not None and self._clock() - last.observed_at <= max_age_s:
            return last
        return await self.collect()


def _retrieved(request: asyncio.Future[ClusterMetadata]) -> None:
    """Its failure is each caller's to raise; marked retrieved so that a request every caller gave up on
    (all cancelled) logs no 'exception never retrieved'."""
    if not request.cancelled():
        request.exception()
