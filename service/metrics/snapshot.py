"""A :class:`ScrapeInputs` as plain tuples of primitives, for the render worker process.

:func:`compact` runs in the API process (on the metrics thread): it copies the observations out as
nested tuples, evaluates everything that needs the runtime or the store (collector staleness, alert
counts, the batched log-end lookups of the lagging rows) and pins the scrape's ``now``. Each
observation's tuples travel pickled (bytes inside the snapshot), so a :class:`Compactor` can keep them
for as long as the observation object is the latest: between two collector cycles a render costs the API
process only the small per-scrape parts (statuses, tails, alert counts) and a memcpy.
:func:`service.metrics.expansion.expand` turns it back into inputs in the worker.

Observation ``failures`` are not carried (no family reads them).
"""

from __future__ import annotations

import logging
import math
import pickle
import time
from collections.abc import Callable, Mapping
from typing import Any

from collectors.errors import OffsetguardError
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    GroupsObservation,
    OffsetsObservation,
)
from service.metrics.sources import ClusterInputs, LogEndTimes, ScrapeInputs
from service.metrics.view import Wanted, wanted_of

log = logging.getLogger(__name__)

# (now, clusters, statuses, stale_after_intervals, tails, alerts, reached_at per cluster, evaluations,
#  reconciles)
Compact = tuple[Any, ...]


def compact(inputs: ScrapeInputs, now: float) -> Compact:
    """Everything one render reads, as tuples (blocking: the store and alert-store reads happen here)."""
    return Compactor().compact(inputs, now)


_PARTS = ("metadata", "offsets", "groups", "committed")
INCOMPLETE_REUSE_S = 5.0  # lag-seconds lookups with unanswered rows are asked again after this


class Compactor:
    """:func:`compact` that keeps each observation's pickled tuples, and the log-end lookups of the
    lagging rows, while the observation objects stay the latest (observations are frozen and replaced
    whole by each collector cycle, so identity is their version). Used from one thread at a time.

    When they change, the store is asked only for the lagging rows it has not answered yet: a crossing
    time, once recorded, stands while the log end stays at or above the offset, so answers are kept
    from scrape to scrape, less those no row wants any more and those of a partition whose log end fell
    since (a truncation, a re-created topic: the crossing that counts is a later one)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._parts: dict[tuple[str, str], tuple[object, bytes]] = {}
        self._reached: dict[str, tuple[object, object, dict[Wanted, float], float]] = {}
        self._ends: dict[str, dict[tuple[str, int], int]] = {}  # log ends the held answers stand on
        self.packed = 0  # observation parts pickled so far (the rest were reused)
        self.asked = 0  # lagging rows the store was asked about so far

    def compact(self, inputs: ScrapeInputs, now: float) -> Compact:
        clusters = tuple(
            (c.cluster, *(self._part(c.cluster, name, getattr(c, name)) for name in _PARTS))
            for c in inputs.clusters
        )
        statuses = tuple(
            (
                s.name,
                s.cluster,
                s.runs,
                s.failures,
                s.last_success_at,
                s.last_duration,
                s.stale(now, inputs.stale_after_intervals),
            )
            for s in inputs.statuses
        )
        tails = tuple(
            (
                t.cluster,
                t.caught_up,
                t.records_per_second,
                tuple(t.lag.items()),
                t.records_total,
                t.unknown_records,
                t.decode_errors,
                t.fetch_errors,
            )
            for t in inputs.tails
        )
        reached = tuple(self._reached_of(inputs.log_end_times, c) for c in inputs.clusters)
        names = {c.cluster for c in inputs.clusters}
        for key in [k for k in self._parts if k[0] not in names]:
            del self._parts[key]
        for name in [n for n in self._reached if n not in names]:
            del self._reached[name]
            self._ends.pop(name, None)
        return (
            now,
            clusters,
            statuses,
            inputs.stale_after_intervals,
            tails,
            _alerts(inputs),
            reached,
            tuple(inputs.evaluations),
            tuple(inputs.reconciles),
        )

    def _part(self, cluster: str, name: str, obs: Any) -> bytes | None:
        if obs is None:
            self._parts.pop((cluster, name), None)
            return None
        held = self._parts.get((cluster, name))
        if held is not None and held[0] is obs:
            return held[1]
        packed = pickle.dumps(_COMPACTORS[name](obs), protocol=pickle.HIGHEST_PROTOCOL)
        self._parts[(cluster, name)] = (obs, packed)
        self.packed += 1
        return packed

    def _reached_of(self, store: LogEndTimes | None, c: ClusterInputs) -> dict[Wanted, float]:
        """Reused while the committed and offsets observations are the same objects: for good when the
        store answered every lagging row (a crossing time, once recorded, does not change), for
        :data:`INCOMPLETE_REUSE_S` when some had no answer (the store may be writing the cycle's sample)."""
        held = self._reached.get(c.cluster)
        fresh = held is not None and held[0] is c.committed and held[1] is c.offsets
        if held is not None and fresh and self._monotonic() < held[3]:
            return held[2]
        ends = c.offsets.log_ends() if c.offsets else {}
        known = self._standing(c.cluster, held[2] if held else {}, ends)
        found, complete, asked = _reached(store, c, ends, known)
        self.asked += asked
        until = math.inf if complete else self._monotonic() + INCOMPLETE_REUSE_S
        self._reached[c.cluster] = (c.committed, c.offsets, found, until)
        self._ends[c.cluster] = ends
        return found

    def _standing(
        self, cluster: str, held: dict[Wanted, float], ends: dict[tuple[str, int], int]
    ) -> dict[Wanted, float]:
        """The held answers whose partition's log end has not fallen since they were given."""
        if not held:
            return held  # nothing to stand (no row lagged): no log end to compare
        before = self._ends.get(cluster, {})
        fallen = {tp for tp, end in ends.items() if end < before.get(tp, end)}
        if not fallen:
            return held
        return {k: v for k, v in held.items() if (k[0], k[1]) not in fallen}


def _metadata(m: ClusterMetadata | None) -> tuple[Any, ...] | None:
    if m is None:
        return None
    return (
        m.cluster,
        m.observed_at,
        m.cluster_id,
        m.controller_id,
        tuple((b.node_id, b.host, b.port, b.rack) for b in m.brokers),
        tuple(
            (
                t.name,
                t.internal,
                tuple(
                    (
                        p.topic,
                        p.partition,
                        p.leader,
                        p.leader_epoch,
                        p.replicas,
                        p.isr,
                        p.offline_replicas,
                        p.error,
                    )
                    for p in t.partitions
                ),
                t.topic_id,
            )
            for t in m.topics
        ),
    )


def _offsets(o: OffsetsObservation | None) -> tuple[Any, ...] | None:
    if o is None:
        return None
    rows = tuple(
        (p.topic, p.partition, p.log_start, p.log_end, p.leader, p.leader_epoch) for p in o.partitions
    )
    return (o.cluster, o.observed_at, rows)


def _groups(g: GroupsObservation | None) -> tuple[Any, ...] | None:
    if g is None:
        return None
    rows = tuple(
        (
            x.group_id,
            x.group_type,
            x.state,
            x.protocol_type,
            x.protocol,
            tuple(
                (
                    m.member_id,
                    m.client_id,
                    m.host,
                    m.instance_id,
                    tuple((tp.topic, tp.partition) for tp in m.assignment),
                    m.member_epoch,
                )
                for m in x.members
            ),
            x.coordinator,
            x.group_epoch,
        )
        for x in g.groups
    )
    return (g.cluster, g.observed_at, rows)


def _committed(c: CommittedObservation | None) -> tuple[Any, ...] | None:
    if c is None:
        return None
    rows = tuple((x.group, x.topic, x.partition, x.offset, x.leader_epoch, x.metadata) for x in c.offsets)
    return (c.cluster, c.observed_at, rows, c.groups)


_COMPACTORS: dict[str, Any] = {
    "metadata": _metadata,
    "offsets": _offsets,
    "groups": _groups,
    "committed": _committed,
}


def _reached(
    store: LogEndTimes | None,
    c: ClusterInputs,
    ends: Mapping[tuple[str, int], int],
    known: Mapping[Wanted, float],
) -> tuple[dict[Wanted, float], bool, int]:
    """The log-end crossing times the lagging rows of ``c`` need (what ``view.cluster_view`` asks; ``ends``
    are ``c``'s log ends), those in ``known`` taken from there; whether every one was answered; how many
    the store was asked."""
    if store is None or c.committed is None or not c.committed.offsets:
        return {}, store is not None, 0
    wanted = wanted_of(c.committed, ends)  # what view.cluster_view asks
    found = {k: at for k in wanted if (at := known.get(k)) is not None}
    missing = wanted.difference(found)
    if not missing:
        return found, True, 0
    try:
        found.update(store.log_end_reached_at_many(c.cluster, missing))
    except OffsetguardError as exc:  # as view._reached_at: a scrape without lag seconds beats none
        log.warning("metrics: lag seconds of %s unavailable: %s", c.cluster, exc)
        return {}, False, len(missing)
    return found, len(found) >= len(wanted), len(missing)


def _alerts(inputs: ScrapeInputs) -> tuple[Any, ...] | None:
    alerts = inputs.alerts
    if alerts is None:
        return None
    try:
        return (
            tuple(alerts.firing_counts().items()),
            tuple(alerts.incident_totals().items()),
            tuple(alerts.magnitude_totals().items()),
        )
    except OffsetguardError as exc:  # as operations.alert_families: the families are left out
        log.warning("metrics: alert counts unavailable: %s", exc)
        return None
