"""One cluster's :class:`alerts.state.CycleInputs` from the latest observations, the scheduler's collector
statuses and queued tail events.

Each observation is handed to detection **once** (the state remembers it; passing it again would add a
duplicate range sample and a zero counter delta). Metadata goes along with every fresh offsets
observation so partitions keep their leader and ISR. Which state-like kinds an evaluation could judge
(:data:`COVERAGE`) decides whether their absence counts towards resolving them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from alerts.model import (
    COLLECTOR_FAILURE,
    COMMITTED_BELOW_LOG_START,
    COMMITTED_BEYOND_LOG_END,
    CONFIG_RISK,
    CONSUMER_STALLED,
    EPOCH_DIVERGENCE,
    LAG_HIGH,
    OFFSETS_EXPIRY_RISK,
    OFFSETS_TOPIC_CLEANER_STALLED,
    OUT_OF_RANGE_FETCHES,
    RETENTION_RISK,
    CollectorStatus,
)
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    ConfigsObservation,
    GroupsObservation,
    MetricsObservation,
    OffsetsObservation,
)
from service.scheduler import CollectorStatus as JobStatus
from service.state import LatestObservations

KINDS: dict[str, type[Any]] = {
    "metadata": ClusterMetadata,
    "offsets": OffsetsObservation,
    "groups": GroupsObservation,
    "committed": CommittedObservation,
    "configs": ConfigsObservation,
    "metrics": MetricsObservation,
}
# State-like kinds an evaluation can judge only with that observation in hand.
COVERAGE: Mapping[str, frozenset[str]] = {
    "offsets": frozenset(
        {COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, LAG_HIGH, CONSUMER_STALLED, RETENTION_RISK}
    ),
    "configs": frozenset({CONFIG_RISK}),
    "metrics": frozenset({OFFSETS_TOPIC_CLEANER_STALLED, OUT_OF_RANGE_FETCHES}),
}
# Kinds judged from rates over clean history: right after a blind spell (alerts.blind.settling) their
# absence says nothing yet, so a firing one is not resolved by it.
SETTLING_KINDS = frozenset({RETENTION_RISK})
# Judged on a log range and on the epoch ends of every commit behind its leader epoch (alerts.truncation):
# covered by an evaluation with offsets only when every one of those ends was known
# (service.detection.epochs.EpochEnds.complete). Counted clean without them, a standing divergence whose
# end was not asked again yet (a restart, more than a cycle's questions) resolved and fired again.
EPOCH_KINDS = frozenset({EPOCH_DIVERGENCE})
ALWAYS_COVERED = frozenset({COLLECTOR_FAILURE, OFFSETS_EXPIRY_RISK})  # statuses and the clock suffice


def with_epochs(covered: frozenset[str], complete: bool) -> frozenset[str]:
    """``covered`` with :data:`EPOCH_KINDS` when it has the offsets observation's kinds and every epoch
    end asked was known (``complete``: :attr:`service.detection.epochs.EpochEnds.complete`)."""
    return covered | EPOCH_KINDS if complete and COVERAGE["offsets"] <= covered else covered


@dataclass(frozen=True)
class Fresh:
    """Observations not yet handed to detection, and what taking them would mark as seen."""

    observations: Mapping[str, Any]
    marks: Mapping[str, float]

    def covered(self) -> frozenset[str]:
        out = set(ALWAYS_COVERED)
        for name, kinds in COVERAGE.items():
            if name in self.marks:
                out |= kinds
        return frozenset(out)


def unranged(fresh: Fresh) -> frozenset[tuple[str, int]]:
    """(topic, partition) the fresh offsets observation could not give a log range (its partition
    failures: no leader, a leader that did not answer); empty without one."""
    offsets = fresh.observations.get("offsets")
    if offsets is None or not offsets.failures:
        return frozenset()
    out = set()
    for f in offsets.failures:
        topic, _, partition = f.key.rpartition("/")
        if f.scope == "partition" and partition.isdigit():
            out.add((topic, int(partition)))
    return frozenset(out)


class FreshObservations:
    """Remembers the ``observed_at`` of what was handed on last, per kind."""

    def __init__(self, cluster: str, latest: LatestObservations) -> None:
        self.cluster = cluster
        self._latest = latest
        self._seen: dict[str, float] = {}

    def peek(self) -> Fresh:
        obs: dict[str, Any] = {}
        marks: dict[str, float] = {}
        for name, kind in KINDS.items():
            found = self._latest.get(self.cluster, kind)
            if found is not None and found.observed_at != self._seen.get(name):
                obs[name] = found
                marks[name] = found.observed_at
        if "offsets" in obs and "metadata" not in obs:
            meta = self._latest.get(self.cluster, ClusterMetadata)
            if meta is not None:
                obs["metadata"] = meta
        return Fresh(obs, marks)

    def taken(self, fresh: Fresh) -> None:
        """Call once the evaluation that used ``fresh`` is stored."""
        self._seen.update(fresh.marks)


PARTIAL_RUNS = 2  # consecutive partial runs of one collector that make the cluster degraded


class CollectorHealth:
    """The scheduler's view of the cluster's collectors as detector :class:`CollectorStatus` values.

    A collector is down when its last run failed *and* it is stale (no success for ``stale_after``
    intervals), so a single failed run raises nothing.
    """

    def __init__(self, statuses: Callable[[], Iterable[JobStatus]], stale_after_intervals: float) -> None:
        self._statuses = statuses
        self._stale_after = stale_after_intervals
        self._since: dict[str, float] = {}

    def degraded(self, now: float) -> bool:
        """Part of the cluster is unobservable now: a collector is down, or its last
        :data:`PARTIAL_RUNS` runs were partial.

        One partial run is not enough: a slow collector's (configs: 5 minutes) stands until its next run,
        and counted with other collectors' passing partial failures (a broker rolling restart) it made
        one long degraded spell past the grace (the 60-minute soak's false ``collector_failure``). A
        partial failure that lasts shows in the next run too; the grace then counts from there."""
        if any(s.partial_streak >= PARTIAL_RUNS for s in self._statuses()):
            return True
        return any(not s.ok for s in self(now))

    def __call__(self, now: float) -> tuple[CollectorStatus, ...]:
        out = []
        for s in self._statuses():
            failed_last = s.last_failure_at is not None and (
                s.last_success_at is None or s.last_failure_at > s.last_success_at
            )
            down = failed_last and s.stale(now, self._stale_after)
            if down:
                self._since.setdefault(s.name, s.last_failure_at or now)
            else:
                self._since.pop(s.name, None)
            error, _, message = (s.last_error or "").partition(": ")
            out.append(
                CollectorStatus(
                    name=s.name,
                    ok=not down,
                    failing_since=self._since.get(s.name),
                    error=error if down else "",
                    message=message if down else "",
                    last_success=s.last_success_at,
                )
            )
        return tuple(out)


class FailureGrace:
    """Holds back ``collector_failure`` until the cluster has been degraded for ``seconds`` in a row.

    :meth:`update` is told each evaluation whether the cluster is degraded (from the scheduler's statuses,
    which persist between observations, unlike the partial failures a single cycle's inputs carry).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.since: float | None = None

    def update(self, degraded: bool, now: float) -> None:
        if not degraded:
            self.since = None
        elif self.since is None:
            self.since = now

    def holding(self, now: float) -> bool:
        """A new collector_failure alert must wait (degraded for less than the grace period)."""
        return self.since is not None and now - self.since < self.seconds

    def covered(self, covered: frozenset[str]) -> frozenset[str]:
        """While degraded, a cycle without the finding (no failing observation in it) is not clean."""
        return covered - {COLLECTOR_FAILURE} if self.since is not None else covered
