"""The :class:`AlertBacklog` of one cluster: alert writes the store refused, kept in order until it takes
writes again.

While the disk refuses writes (:class:`~collectors.errors.StoreWriteError`: full, read-only, I/O error)
detection goes on from memory: an evaluation is planned against the firing alerts as they stand here, its
writes are kept and its alerts reported at once (the dispatcher queues their notifications in memory).
Each later evaluation first writes what is kept, oldest first, one transaction per evaluation, so an
alert raised meanwhile lands once, with its transitions in order. The kept transitions carry
``notified_from_memory`` in their detail: the dispatcher's fan-out passes over them (they were notified
when they happened), so nothing is sent twice.

Bound: transitions are never dropped (an alert changes a few times an hour at most); silent refreshes of
firing alerts (a state-like alert's new magnitude, every ``refresh_seconds``) keep only the newest per
alert, so the backlog holds at most one row per firing alert besides the transitions. A crash loses it:
the detection state saved before the failure replays what it can at the next start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from store.alert_records import Alert, AlertWrite, Fingerprint, Transition, is_event_like
from store.alerts import AlertStore
from store.notification_records import NOTIFIED_FROM_MEMORY

Planner = Callable[[Mapping[Fingerprint, Alert], frozenset[tuple[Fingerprint, str]]], Sequence[AlertWrite]]


@dataclass(frozen=True, slots=True)
class Kept:
    """One evaluation's writes with a transition, and when it ran."""

    at: float
    writes: tuple[AlertWrite, ...]


class AlertBacklog:
    """Not thread-safe: the detection loop's worker (one evaluation at a time) is its only user."""

    def __init__(self) -> None:
        self._kept: list[Kept] = []
        self._refreshes: dict[str, AlertWrite] = {}  # alert id -> its newest silent refresh
        self._firing: dict[Fingerprint, Alert] | None = None  # while anything is kept
        self._resolved: set[tuple[Fingerprint, str]] = set()  # event-like occurrences resolved meanwhile

    def __len__(self) -> int:
        """Writes kept (transitions and refreshes)."""
        return sum(len(k.writes) for k in self._kept) + len(self._refreshes)

    def start(self, firing: Sequence[Alert]) -> None:
        """The store refused a write: plan from ``firing`` (as last stored) from now on."""
        if self._firing is None:
            self._firing = {a.fingerprint: a for a in firing}

    @property
    def keeping(self) -> bool:
        return self._firing is not None

    def plan(self, planner: Planner, at: float) -> tuple[Alert, ...]:
        """Plan against the firing alerts in memory, keep the writes; the alerts as planned, in order."""
        assert self._firing is not None, "start() first"
        writes = planner(dict(self._firing), frozenset(self._resolved))
        kept: list[AlertWrite] = []
        for w in writes:
            if w.transition is None and not w.insert:
                self._refreshes[w.alert.id] = w
            else:
                self._refreshes.pop(w.alert.id, None)  # the transition's write carries the newer values
                kept.append(replace(w, detail={**w.detail, NOTIFIED_FROM_MEMORY: True}))
            self._fold(w.alert)
        if kept:
            self._kept.append(Kept(at, tuple(kept)))
        return tuple(w.alert for w in writes)

    def _fold(self, a: Alert) -> None:
        assert self._firing is not None
        if a.firing:
            self._firing[a.fingerprint] = a
        else:
            if self._firing.get(a.fingerprint, a).id == a.id:
                self._firing.pop(a.fingerprint, None)
            if is_event_like(a.kind):
                self._resolved.add((a.fingerprint, a.occurrence))

    def unstored(self) -> list[tuple[Alert, list[Transition]]]:
        """Each alert the kept writes change, as it stands now, with its kept transitions (oldest first):
        what the API shows beside the stored alerts until they are written."""
        latest: dict[str, Alert] = {}
        history: dict[str, list[Transition]] = {}
        for k in self._kept:
            for w in k.writes:
                a = w.alert
                latest[a.id] = a
                history.setdefault(a.id, []).append(
                    Transition(a.id, k.at, w.transition or "", a.severity, a.cause, w.detail)
                )
        for w in self._refreshes.values():
            latest[w.alert.id] = w.alert
        return [(a, history.get(a.id, [])) for a in latest.values()]

    def flush(self, alerts: AlertStore, cluster: str) -> int:
        """Write what is kept, oldest first, one transaction per evaluation; how many writes. Raises
        :class:`~collectors.errors.StoreError` where the store refuses again (the rest stays kept)."""
        written = 0
        while self._kept:
            kept = self._kept[0]
            alerts.update_firing(cluster, _writing(kept.writes), kept.at)
            self._kept.pop(0)
            written += len(kept.writes)
        if self._refreshes:
            refreshes = tuple(self._refreshes.values())
            at = max(w.alert.updated_at for w in refreshes)
            alerts.update_firing(cluster, _writing(refreshes), at)
            self._refreshes.clear()
            written += len(refreshes)
        self._firing = None
        self._resolved.clear()
        return written


def _writing(writes: Sequence[AlertWrite]) -> Planner:
    """A planner that writes ``writes`` whatever is firing (they were planned against the memory)."""
    return lambda _firing, _resolved: writes
