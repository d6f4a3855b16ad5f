"""The :class:`Dispatcher`: one asyncio task that fans alert transitions out into the persisted queue and
delivers due rows, with backoff, to webhooks and Alertmanagers.

Each round: (1) :meth:`NotificationStore.advance` until no transition is left (plus the catch-up of
firing alerts never notified, when it can find any: :mod:`service.notify.catchup`); (2) deliver the due
rows, receivers in parallel, each receiver's rows in queue order, stopping at its first retryable failure
and holding it until that row's next attempt (a down receiver gets one probe per backoff step, not one
request per queued row); (3) re-post firing alerts to Alertmanagers every ``resend_seconds``; (4) prune
old finished rows hourly. A row is marked delivered only after the receiver answered 2xx, so a crash in
between sends it again (at least once; receivers can drop repeats by ``notification_id``).

While the disk refuses writes, notifying goes on from memory: the transitions detection could not store
come through :meth:`Dispatcher.on_unstored` into a :class:`~service.notify.memory.MemoryQueue`, delivered
from there and stored once the store takes writes again; outcomes of stored rows that cannot be recorded
are kept (and those rows not sent again) until they can.

With several replicas (issue 46, docs/ha.md) only the active one runs a dispatcher, and it is handed a
:class:`SendFence`: each receiver's due rows are first *claimed* (those still pending, read in a write
transaction under the store's fencing guard: only the lease holder at its epoch gets them), and each send
starts only while the fence's local monotonic deadline has not passed (a process woken from SIGSTOP finds
it passed and sends nothing). Webhook and Alertmanager requests carry ``X-Offsetguard-Epoch`` so that a
receiver can drop a send of an older epoch. A row claimed by a replica that died before recording the
outcome is still pending: the next active one sends it again (at least once across a crash mid-send).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from collectors.errors import FencedError, StoreError, StoreWriteError
from service.notify.backoff import Backoff
from service.notify.catchup import CatchUp
from service.notify.errors import DeliveryError
from service.notify.fanout import FanOut, ReceiverSettings
from service.notify.memory import MemoryQueue
from service.notify.payloads import alertmanager_alert, rfc3339
from service.notify.senders import send_alertmanager, send_webhook
from service.notify.silencing import silenced_by
from service.settings import AlertmanagerReceiverSettings, NotifySettings, Settings
from store.alert_records import Alert
from store.notification_records import (
    ABANDONED,
    DELIVERED,
    FIRING_EVENT,
    PENDING,
    RESOLVED_EVENT,
    Change,
    Notification,
    Outcome,
    Silence,
)
from store.notifications import NotificationStore

if TYPE_CHECKING:
    import httpx  # imported at the first send (service.notify.senders)

log = logging.getLogger(__name__)

BATCH = 200  # due rows per round
PRUNE_SECONDS = 3600.0
MIN_WAIT = 0.05
# Alertmanager treats a firing alert as resolved at endsAt unless re-posted: allow a few missed re-posts.
ENDS_AFTER_RESENDS = 4


class SendFence(Protocol):
    """Whether this replica may send now (it holds the leader lease and its local deadline has not
    passed), and the epoch it holds: :class:`service.ha.leadership.Leadership`."""

    @property
    def epoch(self) -> int | None: ...

    def may_send(self) -> bool: ...


EPOCH_HEADER = "X-Offsetguard-Epoch"


@dataclass(frozen=True, slots=True)
class Round:
    """What one :meth:`Dispatcher.run_once` did."""

    queued: int
    delivered: int
    failed: int
    full: bool  # the due batch was full: go again at once


def runbook_base(settings: Settings) -> str | None:
    """``notify.runbook_base_url``, else the API's (alerts then link the same runbook everywhere)."""
    if settings.notify.runbook_base_url is not None:
        return settings.notify.runbook_base_url
    api = getattr(settings, "api", None)
    return getattr(api, "runbook_base_url", None)


class Dispatcher:
    """Start with :meth:`start` in a running loop, stop with :meth:`stop`; :meth:`wake` after a change."""

    def __init__(
        self,
        settings: NotifySettings,
        store: NotificationStore,
        *,
        runbook_base: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        stop_grace_seconds: float = 5.0,
        fence: SendFence | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._receivers: dict[str, ReceiverSettings] = {r.name: r for r in settings.receivers}
        runbook = runbook_base if runbook_base is not None else settings.runbook_base_url
        self._fanout = FanOut(tuple(settings.receivers), runbook, settings.external_url)
        self._catch_up = CatchUp(bool(settings.receivers))
        self._backoff = Backoff.from_settings(settings.retry)
        self._transport = transport
        self._clock = clock
        self._rng = rng or random.Random()
        self._grace = stop_grace_seconds
        self._fence = fence  # None: the only replica, nothing to claim
        self._holds: dict[str, float] = {}  # receiver -> no request before (after a retryable failure)
        self._resent: dict[str, float] = {}  # Alertmanager receiver -> last re-post
        self._pruned = float("-inf")
        self._client: httpx.AsyncClient | None = None
        self._memory = MemoryQueue()  # rows of transitions the store refused
        self._unrecorded: dict[int, Outcome] = {}  # outcomes of stored rows the store refused
        self._silences: list[Silence] = []  # as last read: the memory fan-out's when reads fail too
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.get_running_loop().create_task(self._run(), name="notify")

    async def stop(self) -> None:
        """Let the round in hand finish (up to the grace period), fan out what is left, close the client.

        A delivery cut short stays pending and is sent again at the next start."""
        self._stopping = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), self._grace)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            await self._adopt()
            await self._record([])
            await self._queue(self._clock())
        except StoreWriteError:
            pass  # the store's health logged it; what memory holds is reported below
        except Exception:
            log.exception("notify: transitions not queued at stop (they are at the next start)")
        if self.kept():
            log.error(
                "notify: %d notifications and outcomes kept in memory are lost at stop: the store still "
                "refuses writes (pending ones are not sent; delivered ones may be sent again)",
                self.kept(),
            )
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def halt(self) -> None:
        """Stop at once, queueing and recording nothing more: this replica lost the leader lease and the
        active one does that now. What memory holds is dropped; a row claimed whose send was cut short
        stays pending and the active replica sends it (at least once). :meth:`start` starts afresh."""
        self._stopping = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._memory = MemoryQueue()
        self._unrecorded.clear()
        self._holds.clear()
        self._resent.clear()
        self._catch_up.invalidate()

    def wake(self) -> None:
        """Check for new transitions and due rows now instead of at the next poll."""
        self._wake.set()

    async def on_alerts(self, alerts: Sequence[Alert]) -> None:
        """Detection listener: the alerts are stored (with their transitions) already; just wake up."""
        self.wake()

    def kept(self) -> int:
        """Notifications and delivery outcomes waiting in memory for the store to take them."""
        return len(self._memory) + len(self._unrecorded)

    async def on_unstored(self, changes: Sequence[Change]) -> None:
        """Detection listener for transitions the store refused: fanned out into the memory queue."""
        if not changes:
            return
        now = self._clock()
        ids = [c.alert.id for c in changes]
        try:
            told = await asyncio.to_thread(self._store.told, ids)
            self._silences = await asyncio.to_thread(self._store.silences, ending_after=now)
        except StoreError:  # reads fail too: every receiver is taken as told (a resolve reaches them all)
            told = {(r.name, i) for r in self._receivers.values() for i in ids}
        told |= self._memory.told()
        self._memory.add(self._fanout(changes, (), told, self._silences, now), now)
        self.wake()

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            wait = self._settings.poll_seconds
            try:
                done = await self.run_once()
                wait = 0.0 if done.full else await self._wait_seconds()
            except FencedError as exc:  # the leadership steps down: nothing else to do here
                log.warning("notify: round refused, this replica no longer holds the lease: %s", exc)
            except Exception:  # a store hiccup or a bug must not end notifications
                log.exception("notify: round failed")
            if self._stopping:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def _wait_seconds(self) -> float:
        now = self._clock()
        candidates = [self._settings.poll_seconds]
        holds = [h - now for h in self._holds.values() if h > now]
        candidates.extend(holds)
        try:
            next_due = await asyncio.to_thread(self._store.next_due)
        except StoreError:
            next_due = None
        in_memory = self._memory.next_due()
        if in_memory is not None:
            next_due = in_memory if next_due is None else min(next_due, in_memory)
        if next_due is not None:
            if next_due > now:
                candidates.append(next_due - now)
            elif not holds:
                candidates.append(MIN_WAIT)
        for r in self._alertmanagers():
            candidates.append(self._resent.get(r.name, now) + r.resend_seconds - now)
        return max(min(candidates), MIN_WAIT)

    # ------------------------------------------------------------------ one round

    async def run_once(self) -> Round:
        """Queue new transitions, deliver what is due, re-post to Alertmanagers, prune."""
        now = self._clock()
        # First what memory holds: the catch-up must see those rows (told), or it would queue them again.
        await self._adopt()
        queued = 0
        if not self._memory:
            with contextlib.suppress(StoreWriteError):  # the store's health logs it; memory goes on
                queued = await self._queue(now)
        try:
            due = await asyncio.to_thread(self._store.due, now, BATCH)
        except StoreError:
            due = []
        due = [n for n in due if n.id not in self._unrecorded] + self._memory.due(now)
        due = await self._claim(due)  # with a fence: what this replica may send (one transaction)
        by_receiver: dict[str, list[Notification]] = {}
        for n in due:
            if self._holds.get(n.receiver, float("-inf")) <= now:
                by_receiver.setdefault(n.receiver, []).append(n)
        results = await asyncio.gather(
            *(self._deliver(name, rows, now) for name, rows in by_receiver.items())
        )
        outcomes = [o for batch in results for o in batch]
        self._memory.record(o for o in outcomes if o.id < 0)
        await self._record([o for o in outcomes if o.id > 0])
        await self._resend(now)
        if now - self._pruned >= PRUNE_SECONDS and not self._unrecorded and not self._memory:
            self._pruned = now
            before = now - self._settings.keep_delivered_hours * 3600
            pruned = await asyncio.to_thread(self._store.prune, before)
            if pruned:
                self._catch_up.invalidate()
                log.info("notify: pruned %d finished notifications", pruned)
        delivered = sum(o.state == DELIVERED for o in outcomes)
        return Round(queued, delivered, len(outcomes) - delivered, len(due) == BATCH)

    async def _record(self, outcomes: list[Outcome]) -> None:
        """Store ``outcomes`` and those kept from before; kept (their rows not sent again) if refused."""
        for o in outcomes:
            self._unrecorded[o.id] = o
        if not self._unrecorded:
            return
        kept = list(self._unrecorded.values())
        try:
            await asyncio.to_thread(self._store.record, kept)
        except StoreWriteError:
            return
        for o in kept:
            self._unrecorded.pop(o.id, None)

    async def _adopt(self) -> None:
        """Store the memory queue's rows as they stand, once the store takes writes again."""
        rows = self._memory.rows()
        if not rows:
            return
        try:
            await asyncio.to_thread(self._store.adopt, rows)
        except StoreWriteError:
            return
        self._memory.forget(rows)
        log.info("notify: %d notifications queued in memory while the store failed are stored", len(rows))

    async def _queue(self, now: float) -> int:
        oldest = now - self._backoff.give_up_after_seconds
        added = 0
        while True:
            step = await asyncio.to_thread(
                self._store.advance, self._fanout, now, oldest=oldest, catch_up=self._catch_up.wanted
            )
            if step.caught_up:
                self._catch_up.done()
            elif step.skipped:
                self._catch_up.invalidate()
            added += step.added
            if not step.more:
                return added

    async def _claim(self, rows: list[Notification]) -> list[Notification]:
        """With a fence: the stored rows still pending, read under the fencing guard (none if this replica
        does not hold the lease, or the store cannot say), and the memory queue's rows."""
        if self._fence is None or not rows:
            return rows
        stored = [n.id for n in rows if n.id > 0]
        pending: set[int] = set()
        if stored:
            try:
                pending = await asyncio.to_thread(self._store.claim, stored)
            except StoreError as exc:  # FencedError included: this replica may not send them
                log.warning("notify: %d notifications not claimed, not sent: %s", len(stored), exc)
        return [n for n in rows if n.id < 0 or n.id in pending]

    def _may_send(self) -> bool:
        """No fence, or it says this replica may send now (checked just before every request)."""
        return self._fence is None or self._fence.may_send()

    async def _deliver(self, name: str, rows: list[Notification], now: float) -> list[Outcome]:
        if not rows:
            return []
        receiver = self._receivers.get(name)
        if receiver is None:
            return [
                Outcome(n.id, ABANDONED, now, error=f"receiver {name!r} is no longer configured")
                for n in rows
            ]
        if isinstance(receiver, AlertmanagerReceiverSettings):
            return await self._deliver_alertmanager(receiver, rows, now)
        outcomes: list[Outcome] = []
        for n in rows:
            if not self._may_send():
                break  # the lease may have run out (a pause, a lost renewal): left pending, not sent
            try:
                await send_webhook(self._http(), receiver, n)
            except DeliveryError as exc:
                outcomes.append(self._failed(n, exc, now))
                if exc.retryable:
                    break  # the rest waits: same receiver, likely the same fate, and order matters
                continue
            outcomes.append(Outcome(n.id, DELIVERED, self._clock()))
        return outcomes

    async def _deliver_alertmanager(
        self, receiver: AlertmanagerReceiverSettings, rows: list[Notification], now: float
    ) -> list[Outcome]:
        # Alertmanager keeps state, not events: only each alert's newest row needs sending.
        latest: dict[str, Notification] = {}
        for n in rows:
            latest[n.alert_id] = n
        body = [self._am_body(receiver, n.payload, n.event, now) for n in latest.values()]
        if not self._may_send():
            return []
        try:
            await send_alertmanager(self._http(), receiver, body)
        except DeliveryError as exc:
            return [self._failed(n, exc, now) for n in rows]
        # The alerts just posted are fresh; the others' endsAt leaves room for a re-post one period later.
        self._resent[receiver.name] = now
        at = self._clock()
        return [Outcome(n.id, DELIVERED, at) for n in rows]

    def _am_body(
        self, receiver: AlertmanagerReceiverSettings, payload: Any, event: str, now: float
    ) -> dict[str, Any]:
        body = dict(payload)
        if event != RESOLVED_EVENT:
            body["endsAt"] = rfc3339(now + ENDS_AFTER_RESENDS * receiver.resend_seconds)
        return body

    def _failed(self, n: Notification, exc: DeliveryError, now: float) -> Outcome:
        attempts = n.attempts + 1
        if not exc.retryable or self._backoff.give_up(attempts, n.created_at, now):
            log.error("notify: %s %s of alert %s abandoned after %d attempt(s): %s",
                      n.receiver, n.event, n.alert_id, attempts, exc, extra=_context(n))  # fmt: skip
            return Outcome(n.id, ABANDONED, now, error=str(exc))
        delay = self._backoff.delay(attempts, self._rng)
        if exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, self._backoff.max_seconds))
        retry_at = now + delay
        self._holds[n.receiver] = max(self._holds.get(n.receiver, retry_at), retry_at)
        log.warning("notify: %s %s of alert %s failed (attempt %d, retry in %.1f s): %s",
                    n.receiver, n.event, n.alert_id, attempts, delay, exc, extra=_context(n))  # fmt: skip
        return Outcome(n.id, PENDING, now, next_attempt_at=retry_at, error=str(exc))

    # ------------------------------------------------------------------ Alertmanager re-posts

    def _alertmanagers(self) -> list[AlertmanagerReceiverSettings]:
        return [r for r in self._receivers.values() if isinstance(r, AlertmanagerReceiverSettings)]

    async def _resend(self, now: float) -> None:
        """Re-post firing alerts an Alertmanager was told about; best effort (the next re-post retries)."""
        for receiver in self._alertmanagers():
            if now - self._resent.get(receiver.name, float("-inf")) < receiver.resend_seconds:
                continue
            if self._holds.get(receiver.name, float("-inf")) > now:
                continue
            self._resent[receiver.name] = now
            alerts = await asyncio.to_thread(self._store.delivered_firing, receiver.name)
            silences = await asyncio.to_thread(self._store.silences, ending_after=now)
            body = [
                self._am_body(receiver, self._am_firing(a), FIRING_EVENT, now)
                for a in alerts
                if receiver.accepts(a.kind, a.severity) and silenced_by(silences, a, now) is None
            ]
            if not body or not self._may_send():
                continue
            try:
                await send_alertmanager(self._http(), receiver, body)
            except DeliveryError as exc:
                log.warning(
                    "notify: re-post of %d firing alert(s) to %s failed: %s",
                    len(body),
                    receiver.name,
                    exc,
                    extra={"receiver": receiver.name},
                )

    def _am_firing(self, alert: Alert) -> dict[str, Any]:
        f = self._fanout
        return alertmanager_alert(
            alert, FIRING_EVENT, runbook_base=f.runbook_base, external_url=f.external_url
        )

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:  # made on first use, closed by stop()
            import httpx  # here, not at start: a service without receivers never sends

            self._client = httpx.AsyncClient(transport=self._transport)
        if self._fence is not None and self._fence.epoch is not None:  # receivers can fence by epoch
            self._client.headers[EPOCH_HEADER] = str(self._fence.epoch)
        return self._client


def _context(n: Notification) -> dict[str, str]:
    """The ``extra=`` of a delivery's log line (service.logs)."""
    return {"alert_id": n.alert_id, "receiver": n.receiver, "event": n.event}


def build_dispatcher(
    settings: Settings, store: NotificationStore, *, fence: SendFence | None = None
) -> Dispatcher:
    """The real dispatcher of ``settings.notify`` over ``store`` (guarded by ``fence``'s lease, if any)."""
    return Dispatcher(settings.notify, store, runbook_base=runbook_base(settings), fence=fence)
