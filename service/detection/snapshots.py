"""Snapshots on critical offset alerts: dump the group's ``__consumer_offsets`` partition, rate-limited.

The dump runs in a worker thread (one at a time, it reads a whole partition); its id is written on the
alert. Per group at most one every ``group_interval_seconds``; all clusters together at most
``max_per_hour``. A refused or failed snapshot is logged and noted in the alert's history.

One snapshot per alert: an alert that repeats (every cycle, for a condition that persists) while its
snapshot is under way, or after it was taken, asks for nothing more; after a refusal or a failure it asks
again at most every ``RETRY_SECONDS``. Without this a persisting critical condition spent the hourly
budget on copies of one dump and the next incident got none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from alerts.model import (
    COMMITTED_BELOW_LOG_START,
    COMMITTED_BEYOND_LOG_END,
    LOG_TRUNCATION,
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
)
from collectors.errors import OffsetguardError
from service.logs import alert_context
from store.alert_records import Alert, Transition
from store.alerts import AlertStore

log = logging.getLogger(__name__)

SNAPSHOT_KINDS = frozenset(
    {
        OFFSET_REWIND,
        OFFSET_SKIP,
        COMMITTED_BEYOND_LOG_END,
        COMMITTED_BELOW_LOG_START,
        OFFSETS_LOST,
        LOG_TRUNCATION,
    }
)
HOUR = 3600.0
RETRY_SECONDS = 300.0
FORGET_SECONDS = 24 * HOUR  # an alert's attempt is remembered this long (bounds the memory)

# (group, trigger) -> snapshot id; blocking (dump_group over a fresh Kafka reader in production).
DumpFunction = Callable[[str, str], str]


class SnapshotRateLimit:
    """Per (cluster, group) spacing plus a global hourly budget; share one across clusters."""

    def __init__(self, group_interval_seconds: float, max_per_hour: int) -> None:
        self.group_interval = group_interval_seconds
        self.max_per_hour = max_per_hour
        self._last: dict[tuple[str, str], float] = {}
        self._taken: deque[float] = deque()

    def allow(self, cluster: str, group: str, now: float) -> str | None:
        """None if a snapshot may be taken now (and counts it), else why not."""
        while self._taken and now - self._taken[0] >= HOUR:
            self._taken.popleft()
        last = self._last.get((cluster, group))
        if last is not None and now - last < self.group_interval:
            return f"group {group} had a snapshot {now - last:.0f} s ago"
        if len(self._taken) >= self.max_per_hour:
            return f"{self.max_per_hour} snapshots in the last hour"
        self._last[(cluster, group)] = now
        self._taken.append(now)
        return None


def wants_snapshot(alert: Alert) -> bool:
    return alert.severity == "critical" and alert.kind in SNAPSHOT_KINDS and alert.snapshot_id is None


def snapshot_groups(alert: Alert) -> tuple[str, ...]:
    """The alert's group, or for a truncation the groups whose commits are past the new log end."""
    if alert.group is not None:
        return (alert.group,)
    beyond = alert.evidence.get("groups_beyond_log_end") or ()
    return tuple(str(g) for g in beyond) if isinstance(beyond, list | tuple) else ()


class SnapshotTrigger:
    """Asks for snapshots of critical offset alerts; :meth:`drain` waits for the ones under way."""

    def __init__(
        self,
        dump: DumpFunction,
        alerts: AlertStore,
        limit: SnapshotRateLimit,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._dump = dump
        self._alerts = alerts
        self._limit = limit
        self._clock = clock
        self._one_at_a_time = asyncio.Semaphore(1)
        self._tasks: set[asyncio.Task[None]] = set()
        # alert id -> (when it last asked, whether that attempt is under way or succeeded)
        self._asked: dict[str, tuple[float, bool]] = {}

    def request(self, alerts: Sequence[Alert]) -> None:
        """Start snapshots for the alerts that want one (from the running loop; returns at once)."""
        now = self._clock()
        self._forget(now)
        for alert in alerts:
            if not wants_snapshot(alert) or not self._may_ask(alert.id, now):
                continue
            self._asked[alert.id] = (now, True)
            for group in snapshot_groups(alert):
                refused = self._limit.allow(alert.cluster, group, now)
                if refused is not None:
                    self._asked[alert.id] = (now, False)
                    log.warning(
                        "no snapshot of %s for alert %s: %s",
                        group,
                        alert.id,
                        refused,
                        extra={**alert_context(alert), "group": group},
                    )
                    detail = {"group": group, "reason": refused}
                    self._spawn(asyncio.to_thread(self._note, alert, "snapshot_skipped", detail))
                    continue
                self._spawn(self._take(alert, group))

    def _may_ask(self, alert_id: str, now: float) -> bool:
        asked = self._asked.get(alert_id)
        if asked is None:
            return True
        at, holding = asked
        return not holding and now - at >= RETRY_SECONDS

    def _forget(self, now: float) -> None:
        if len(self._asked) > 1000:
            for alert_id in [a for a, (at, _) in self._asked.items() if now - at > FORGET_SECONDS]:
                del self._asked[alert_id]

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float = 120.0) -> None:
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), timeout)

    async def _take(self, alert: Alert, group: str) -> None:
        async with self._one_at_a_time:
            try:
                snapshot_id = await asyncio.to_thread(self._dump, group, alert.id)
                await asyncio.to_thread(self._alerts.set_snapshot, alert.id, snapshot_id, self._clock())
                log.info(
                    "snapshot %s taken for alert %s (%s)",
                    snapshot_id,
                    alert.id,
                    alert.kind,
                    extra={**alert_context(alert), "group": group, "snapshot_id": snapshot_id},
                )
            except OffsetguardError as exc:
                self._asked[alert.id] = (self._clock(), False)
                log.warning(
                    "snapshot of %s for alert %s failed: %s",
                    group,
                    alert.id,
                    exc,
                    extra={**alert_context(alert), "group": group},
                )
                await asyncio.to_thread(
                    self._note, alert, "snapshot_failed", {"group": group, "error": str(exc)}
                )
            except Exception:
                self._asked[alert.id] = (self._clock(), False)
                log.exception(
                    "snapshot of %s for alert %s crashed",
                    group,
                    alert.id,
                    extra={**alert_context(alert), "group": group},
                )

    def _note(self, alert: Alert, what: str, detail: dict[str, str]) -> None:
        try:
            self._alerts.add_transition(
                Transition(alert.id, self._clock(), what, alert.severity, alert.cause, detail)
            )
        except OffsetguardError as exc:
            log.warning("alert %s: history not written: %s", alert.id, exc, extra=alert_context(alert))
