"""What the metrics read, as small Protocols, and the one place that reads them off the runtime.

The collector never holds the runtime itself: at each scrape :func:`inputs_from_runtime` copies out the
latest observations, collector statuses, tail figures and alert counts into :class:`ScrapeInputs`, and
the families are built from that snapshot only. Call it on the event loop (the tails' figures are
mutated there); the rendering thread then only reads the frozen snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupsObservation,
    OffsetsObservation,
)
from service.metrics.store_health import StoreFigures
from store.health import StoreHealth


@runtime_checkable
class AlertCounts(Protocol):
    """What the metrics need from the alert store (``store/alerts*``)."""

    def firing_counts(self) -> Mapping[tuple[str, str, str], int]:
        """Alerts firing now, by (kind, severity, cluster)."""
        ...

    def incident_totals(self) -> Mapping[tuple[str, str], int]:
        """Incidents opened so far (monotonic), by (kind, cluster)."""
        ...

    def magnitude_totals(self) -> Mapping[tuple[str, str], int]:
        """Messages affected so far (monotonic), by (name, cluster); name is replayed, skipped or lost."""
        ...


class TailFiguresLike(Protocol):
    """The figures of one ``__consumer_offsets`` tail (``collectors.tail_model.TailFigures`` fits)."""

    @property
    def cluster(self) -> str: ...
    @property
    def caught_up(self) -> bool: ...
    @property
    def records_per_second(self) -> float: ...
    @property
    def lag(self) -> Mapping[int, int]: ...
    @property
    def records_total(self) -> int: ...
    @property
    def unknown_records(self) -> int: ...
    @property
    def decode_errors(self) -> int: ...
    @property
    def fetch_errors(self) -> int: ...


class TailLike(Protocol):
    """A running tail (``collectors.tail.OffsetsTail`` fits): a fresh figures snapshot on demand."""

    def figures(self) -> TailFiguresLike: ...


# (cluster, reconciliations run, differences found): collectors.reconcile.Reconciler, read at scrape time
ReconcileFigures = tuple[str, int, int]


class StatusLike(Protocol):
    """One collector's scheduler status (``service.scheduler.CollectorStatus`` fits)."""

    @property
    def name(self) -> str: ...
    @property
    def cluster(self) -> str: ...
    @property
    def runs(self) -> int: ...
    @property
    def failures(self) -> int: ...
    @property
    def last_success_at(self) -> float | None: ...
    @property
    def last_duration(self) -> float | None: ...

    def stale(self, now: float, stale_after_intervals: float) -> bool: ...


class LogEndTimes(Protocol):
    """The store's batched log-end history lookup (``store.Store`` fits); blocking."""

    def log_end_reached_at_many(
        self, cluster: str, wanted: Iterable[tuple[str, int, int]]
    ) -> Mapping[tuple[str, int, int], float]: ...


class CommittedLike(Protocol):
    """A committed-offsets observation as the metrics read it (:class:`CommittedObservation` fits; so
    does the render worker's stand-in, which builds no offset objects unless ``offsets`` is read)."""

    @property
    def cluster(self) -> str: ...
    @property
    def observed_at(self) -> float: ...
    @property
    def offsets(self) -> tuple[CommittedOffset, ...]: ...
    @property
    def groups(self) -> tuple[str, ...]: ...

    def keyed_offsets(self) -> Iterator[tuple[tuple[str, str, int], int]]:
        """``((group, topic, partition), offset)`` of each committed offset, in order."""
        ...


@dataclass(frozen=True, slots=True)
class ClusterInputs:
    """The latest observations of one cluster (None: not observed yet)."""

    cluster: str
    metadata: ClusterMetadata | None = None
    offsets: OffsetsObservation | None = None
    groups: GroupsObservation | None = None
    committed: CommittedLike | None = None


@dataclass(frozen=True, slots=True)
class ScrapeInputs:
    """Everything one scrape reads, copied out of the runtime at scrape time."""

    clusters: Sequence[ClusterInputs] = ()
    statuses: Sequence[StatusLike] = ()
    stale_after_intervals: float = 3.0
    tails: Sequence[TailFiguresLike] = ()
    evaluations: Sequence[tuple[str, int]] = ()  # (cluster, detection evaluations completed)
    reconciles: Sequence[ReconcileFigures] = ()  # clusters whose committed offsets come from the tail
    alerts: AlertCounts | None = None
    log_end_times: LogEndTimes | None = None
    store: StoreFigures | None = None
    leader: Mapping[str, Any] | None = None  # ha on: service.ha.Leadership.view()


def inputs_from_runtime(runtime: Any) -> ScrapeInputs:
    """Read a :class:`service.runtime.Runtime` (duck-typed, so tests may hand in a plain object).

    The alert store is looked up as ``runtime.alerts`` and used only if it has the :class:`AlertCounts`
    methods; without it the alert families are simply not emitted.
    """
    if runtime is None:
        return ScrapeInputs()
    latest = runtime.latest
    names = [c.name for c in runtime.settings.clusters]
    clusters = [
        ClusterInputs(
            cluster=name,
            metadata=latest.get(name, ClusterMetadata),
            offsets=latest.get(name, OffsetsObservation),
            groups=latest.get(name, GroupsObservation),
            committed=latest.get(name, CommittedObservation),
        )
        for name in names
    ]
    alerts = getattr(runtime, "alerts", None)
    scheduler = runtime.scheduler
    return ScrapeInputs(
        clusters=clusters,
        statuses=list(scheduler.statuses()),
        stale_after_intervals=scheduler.stale_after_intervals,
        tails=[tail.figures() for tail in getattr(runtime, "tails", ())],
        evaluations=[(d.cluster, d.evaluations) for d in getattr(runtime, "detections", ())],
        reconciles=[(r.cluster, r.runs, r.differences) for r in getattr(runtime, "reconcilers", ())],
        alerts=alerts if isinstance(alerts, AlertCounts) else None,
        log_end_times=runtime.store,
        store=store_figures(runtime),
        leader=leader_view(runtime),
    )


def leader_view(runtime: Any) -> Mapping[str, Any] | None:
    """ha on: the runtime's leadership (role, replica, holder, epoch); None for a single replica."""
    leadership = getattr(runtime, "leadership", None)
    return leadership.view() if leadership is not None else None


def store_figures(runtime: Any) -> StoreFigures | None:
    """The store's health and the writes kept in memory (detection's alert writes, the dispatcher's
    notifications); None without a store."""
    health = getattr(getattr(runtime, "store", None), "health", None)
    if not isinstance(health, StoreHealth):
        return None
    backlog = {"alert_writes": sum(len(d.backlog) for d in getattr(runtime, "detections", ()))}
    notifier = getattr(runtime, "notifier", None)
    if notifier is not None:
        backlog["notifications"] = notifier.kept()
    return StoreFigures(health.view(), backlog)
