"""Committed offsets of every group: one OffsetFetch per coordinator, per-group retry for the failures."""

from __future__ import annotations

import asyncio

from collectors.errors import KafkaError
from collectors.model import CommittedObservation, CommittedOffset, Failure
from collectors.seam import SeamCollector, failure

# Share groups keep no committed offsets (their state lives in the share coordinator).
_NO_OFFSETS = frozenset({"share"})
_FALLBACK_CONCURRENCY = 8


class CommittedCollector(SeamCollector):
    """Collects :class:`CommittedObservation` for all groups.

    Each broker lists the groups it coordinates and is asked for all of their offsets in one OffsetFetch
    (v8, many groups). Groups that fail there (moved coordinator, loading, whole request lost) get their
    coordinator looked up again and are fetched one by one; a group that still fails is a ``group``
    failure. A broker whose groups cannot even be listed is a ``broker`` failure.
    """

    name = "committed"

    async def collect(self) -> CommittedObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
        rounds = await asyncio.gather(*(self._ask_coordinator(b.node_id) for b in meta.brokers))
        offsets: dict[str, list[CommittedOffset]] = {}
        retry: dict[str, KafkaError] = {}
        failures: list[Failure] = []
        for found, errored, lost in rounds:
            offsets.update(found)
            retry.update(errored)
            failures.extend(lost)
        if retry:
            found, lost = await self._fallback(retry)
            offsets.update(found)
            failures.extend(lost)
        groups = tuple(sorted(offsets))
        flat = tuple(o for g in groups for o in offsets[g])
        return CommittedObservation(self.cluster, observed_at, flat, groups, tuple(failures))

    async def _ask_coordinator(
        self, broker: int
    ) -> tuple[dict[str, list[CommittedOffset]], dict[str, KafkaError], list[Failure]]:
        try:
            listed = await asyncio.to_thread(self._seam.list_groups, broker)
        except KafkaError as exc:
            return {}, {}, [failure("broker", str(broker), exc)]
        ids = [g.group_id for g in listed if g.group_type not in _NO_OFFSETS]
        if not ids:
            return {}, {}, []
        try:
            result = await asyncio.to_thread(self._seam.fetch_offsets, broker, ids)
        except KafkaError as exc:
            return {}, dict.fromkeys(ids, exc), []
        found: dict[str, list[CommittedOffset]] = {}
        errored: dict[str, KafkaError] = {}
        for g in ids:
            got = result.get(g)
            if isinstance(got, list):
                found[g] = got
            else:
                errored[g] = got or KafkaError(
                    "coordinator did not answer for the group", cluster=self.cluster, group=g
                )
        return found, errored, []

    async def _fallback(
        self, errored: dict[str, KafkaError]
    ) -> tuple[dict[str, list[CommittedOffset]], list[Failure]]:
        """Per-group OffsetFetch to a freshly looked-up coordinator; what still fails is recorded."""
        ids = sorted(errored)
        try:
            coordinators = await asyncio.to_thread(self._seam.find_coordinators, ids)
        except KafkaError as exc:
            return {}, [failure("group", g, exc) for g in ids]
        limit = asyncio.Semaphore(_FALLBACK_CONCURRENCY)

        async def one(group: str) -> list[CommittedOffset] | KafkaError:
            coordinator = coordinators.get(group, errored[group])
            if isinstance(coordinator, KafkaError):
                return coordinator
            async with limit:
                try:
                    got = await asyncio.to_thread(self._seam.fetch_offsets, coordinator, [group])
                except KafkaError as exc:
                    return exc
            answer = got.get(group)
            if answer is None:
                return KafkaError(
                    "coordinator did not answer for the group", cluster=self.cluster, group=group
                )
            return answer

        results = await asyncio.gather(*(one(g) for g in ids))
        found: dict[str, list[CommittedOffset]] = {}
        lost: list[Failure] = []
        for group, got in zip(ids, results, strict=True):
            if isinstance(got, list):
                found[group] = got
            else:
                lost.append(failure("group", group, got))
        return found, lost
