"""A fleet's days written into a store through its own write APIs, for ``bench/store_year``.

Each day: the offsets history of every group and partition every ``step`` seconds (commits and log ends
advance; log starts move with a week of retention); a consumer rolling restart of every group once a week
(its commits pause for a step: no rows); a broker rolling restart once a week (three brokers in turn:
their partitions' leaders move away and back, each move a new leader epoch); ``incidents`` event-like
alerts (fired, repeated, snapshotted, acknowledged, which resolves them) and ``lag_alerts`` lag alerts
(fired, refreshed twice, resolved when the lag clears, 1-6 h later), plus ``stuck`` groups whose lag
alert fires all year (refreshed daily); every transition fanned out to one webhook receiver and
delivered. Then the service's maintenance, once a day instead of every hour (the same deletions, a day
later at most): history thinned and expired, resolved alerts pruned, finished notifications pruned,
snapshot index rows past ``snapshots.keep`` deleted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets
from collectors.snapshots.model import SnapshotInfo
from service.notify.payloads import webhook_payload
from service.settings import Settings
from store import Store
from store.alert_records import FIRING, RESOLVED, Alert, AlertWrite
from store.alerts import AlertStore
from store.notification_records import DELIVERED, Change, NewNotification, Outcome
from store.notifications import NotificationStore

CLUSTER = "bench"
DAY = 86400.0
BROKERS = 3
EVENT_KINDS = ("offset_rewind", "offset_skip", "offsets_lost", "unclean_leader_election")
EVENTS = {"fired": "firing", "repeated": "updated", "acked": "updated", "resolved": "resolved"}


@dataclass(frozen=True, slots=True)
class Fleet:
    groups: int = 2000
    partitions: int = 2  # per group; two groups share a topic
    step: float = 7200.0  # seconds between two history samples
    incidents: int = 4  # event-like alerts a day
    lag_alerts: int = 50  # lag alerts a day
    stuck: int = 20  # groups whose lag alert fires all year

    def group(self, g: int) -> str:
        return f"group-{g:04d}"

    def topic(self, g: int) -> str:
        return f"topic-{g // 2:04d}"


@dataclass
class Clock:
    """What the synthesis remembers between days: leader epochs and the alerts still firing."""

    rng: random.Random = field(default_factory=lambda: random.Random(45))
    epochs: dict[tuple[int, int], int] = field(default_factory=dict)
    stuck: list[Alert] = field(default_factory=list)
    _names: list[tuple[str, str]] = field(default_factory=list)

    def names(self, fleet: Fleet) -> list[tuple[str, str]]:
        """(group, topic) of every group, built once."""
        if not self._names:
            self._names = [(fleet.group(g), fleet.topic(g)) for g in range(fleet.groups)]
        return self._names


class Writer:
    """The stores the service writes, opened on one file."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = Store.open(settings.store)
        self.alerts = AlertStore.open(settings.store)
        self.notifications = NotificationStore.open(settings.store)

    def close(self) -> None:
        for s in (self.notifications, self.alerts, self.store):
            s.close()

    def day(self, fleet: Fleet, clock: Clock, start: float) -> None:
        """One day from ``start``: history, alerts, notifications, then the maintenance."""
        steps = int(DAY // fleet.step)
        for k in range(steps):
            self._history(fleet, clock, start + k * fleet.step)
        self._alerts(fleet, clock, start)
        self._notify(start + DAY)
        self._maintain(start + DAY)

    def _history(self, fleet: Fleet, clock: Clock, at: float) -> None:
        cycle = int(at // fleet.step)
        week_hour = int(at % (7 * DAY) // 3600)
        committed = []
        names = clock.names(fleet)
        for g, (group, topic) in enumerate(names):
            paused = week_hour == (g % 7) * 24 + g % 24  # this group's weekly rolling restart
            for p in range(fleet.partitions):
                offset = 1_000 * (cycle - (1 if paused else 0)) + p
                committed.append(CommittedOffset(group, topic, p, offset, 1, ""))
        groups = tuple(group for group, _ in names)
        self.store.record_committed(CommittedObservation(CLUSTER, at, tuple(committed), groups))
        restarting = week_hour - 6 * 24 - 2  # brokers restart in turn on day 6, from 02:00
        parts = []
        for t in range((fleet.groups + 1) // 2):
            for p in range(fleet.partitions):
                preferred = (t + p) % BROKERS
                away = 0 <= restarting < BROKERS and preferred == restarting
                leader = (preferred + 1) % BROKERS if away else preferred
                epoch = clock.epochs.get((t, p), 0)
                if restarting in (preferred, preferred + 1) and 0 <= restarting <= BROKERS:
                    epoch = clock.epochs[(t, p)] = epoch + 1
                log_start = max(0, 1_000 * (cycle - int(7 * DAY // fleet.step)))
                parts.append(
                    PartitionOffsets(f"topic-{t:04d}", p, log_start, 1_000 * cycle + 500, leader, epoch)
                )
        self.store.record_offsets(OffsetsObservation(CLUSTER, at, tuple(parts)))

    def _write(self, writes: Sequence[AlertWrite], at: float) -> tuple[Alert, ...]:
        return self.alerts.update_firing(CLUSTER, lambda firing, resolved: list(writes), at)

    def _alerts(self, fleet: Fleet, clock: Clock, start: float) -> None:
        rng, day = clock.rng, int(start // DAY)
        movable = range(fleet.stuck, fleet.groups)  # the stuck groups' lag alerts never clear
        if not clock.stuck:
            for g in range(fleet.stuck):
                clock.stuck += self._write([_fire(_alert("lag_high", f"stuck-{g}", fleet, g, start))], start)
        else:
            clock.stuck = [self._refresh(a, start + 60, lag=1_000_000 + day) for a in clock.stuck]
        for i, g in enumerate(rng.sample(movable, fleet.incidents)):
            at = start + rng.uniform(0, DAY - 7200)
            kind = EVENT_KINDS[i % len(EVENT_KINDS)]
            [a] = self._write([_fire(_alert(kind, f"{kind}-{day}-{i}", fleet, g, at))], at)
            again = replace(a, occurrences=2, updated_at=at + 300, occurrence=f"{a.id}-2")
            [a] = self._write([AlertWrite(again, False, "repeated", {"occurrence": 2})], at + 300)
            snap = f"{day:04d}-{i}-{g}"
            self.store.add_snapshot(_snapshot(snap, fleet.group(g), a.id, at + 10))
            self.alerts.set_snapshot(a.id, snap, at + 10)
            self.alerts.ack(a.id, "oncall", "known: replayed after a deploy", at + 1800)
        for i, g in enumerate(rng.sample(movable, fleet.lag_alerts)):
            at = start + rng.uniform(0, DAY - 7 * 3600)
            [a] = self._write([_fire(_alert("lag_high", f"lag-{day}-{i}", fleet, g, at))], at)
            a = self._refresh(self._refresh(a, at + 600, lag=60_000), at + 1200, lag=90_000)
            ends = at + rng.uniform(3600, 6 * 3600)
            done = replace(a, status=RESOLVED, resolved_at=ends, resolved_reason="cleared", updated_at=ends)
            self._write([AlertWrite(done, False, "resolved")], ends)

    def _refresh(self, a: Alert, at: float, *, lag: int) -> Alert:
        new = replace(a, updated_at=at, magnitude={"lag": lag}, magnitude_total={"lag": lag})
        [stored] = self._write([AlertWrite(new, False, None)], at)
        return stored

    def _notify(self, now: float) -> None:
        while self.notifications.advance(_fan_out, now).more:
            pass
        while due := self.notifications.due(now, limit=500):
            self.notifications.record([Outcome(n.id, DELIVERED, now) for n in due])

    def _maintain(self, now: float) -> None:
        s = self.settings
        self.store.thin(now)
        self.alerts.prune(now - s.store.alerts_retention_days * DAY)
        self.notifications.prune(now - s.notify.keep_delivered_hours * 3600)
        for snap in self.store.snapshots(CLUSTER)[: -s.snapshots.keep]:  # oldest first: keep the newest
            self.store.delete_snapshot(snap.id)


def _fan_out(
    changes: Sequence[Change], firing: Any, told: Any, silences: Any, now: float
) -> list[NewNotification]:
    return [
        NewNotification(
            "oncall",
            c.alert.id,
            EVENTS[c.transition],
            webhook_payload(c.alert, EVENTS[c.transition], transition=c.transition, runbook_base=None),
            transition_seq=c.seq,
        )
        for c in changes
        if c.transition in EVENTS
    ]


def _fire(a: Alert) -> AlertWrite:
    return AlertWrite(a, True, "fired")


def _alert(kind: str, alert_id: str, fleet: Fleet, g: int, at: float) -> Alert:
    lag = kind == "lag_high"
    magnitude: dict[str, int | float | None] = {"lag": 50_000} if lag else {"messages_replayed": 12_000}
    return Alert(
        id=alert_id,
        kind=kind,
        severity="warning" if lag else "critical",
        status=FIRING,
        cluster=CLUSTER,
        group=fleet.group(g),
        topic=fleet.topic(g),
        partition=g % fleet.partitions,
        started_at=at,
        updated_at=at,
        summary=f"{kind} on {fleet.group(g)} {fleet.topic(g)}[{g % fleet.partitions}]",
        cause="consumer" if lag else "a member committed an older offset",
        magnitude=magnitude,
        magnitude_total=magnitude,
        evidence={"threshold": 10_000, "offsets": [1_000, 2_000], "member": f"consumer-{g}-1"},
        occurrence=f"{alert_id}-1",
        occurrences=1,
    )


def _snapshot(snap_id: str, group: str, alert_id: str, at: float) -> SnapshotInfo:
    return SnapshotInfo(
        id=snap_id,
        cluster=CLUSTER,
        group=group,
        partition=7,
        trigger=alert_id,
        created_at=at,
        path=f"/var/lib/offsetguard/snapshots/{snap_id}",
        first_offset=100,
        last_offset=9_000,
        record_count=8_900,
        bytes=2_000_000,
        manifest_sha256="0" * 64,
    )
