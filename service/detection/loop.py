"""The :class:`DetectionLoop` of one cluster: evaluates the pure detectors and stores the alert lifecycle.

Triggers: a fresh collector observation (:meth:`observe`, a scheduler sink) evaluates at once; tail events
(:meth:`add_events`) are batched for at most ``debounce_seconds`` after the first one; and a ``tick_seconds``
timer evaluates anyway (collector failures, quiet periods). While log offsets keep arriving, every other
observation and tail event waits for the next offsets observation, at most ``offsets_wait_seconds``
(:mod:`service.detection.pace`): one evaluation per offsets interval. Evaluations start at most every
``min_evaluation_interval_seconds``: triggers arriving sooner are folded into the next one (each collector and
a busy tail would otherwise start a full evaluation of their own). Tail events that may be an incident (a
commit below the group-partition's last known offset, an offset tombstone) skip both waits: they are evaluated
after ``debounce_seconds``, so a rewind pages as fast as the tail reads it. One worker task runs the
evaluations one after another, in a worker thread (detectors, SQLite).

An evaluation's alerts are written (one transaction) **before** anything is reported (listeners,
snapshots). If the write fails, the state is not advanced and the events are kept for the next attempt;
but where the disk refuses writes (full, read-only, I/O error) detection goes on from memory: the writes
are kept in order (:mod:`service.detection.backlog`), the alerts reported at once (the unstored listeners
get their transitions: the dispatcher queues them in memory), and written at the first evaluation the
store takes them again.
The :class:`~alerts.state.DetectionState` is saved every ``state_save_seconds`` (in a moment ``/metrics``
expects no render, at most a minute late: :mod:`service.detection.save_timing`) and at stop; after a crash
detection resumes from the last save: commits seen since are compared against older values (a move may be
reported once more, deduplicated by fingerprint and occurrence), and tail events already checkpointed by
the tail are not delivered again. With several replicas (issue 46) a replica that loses the leader lease
halts its loop (:meth:`~DetectionLoop.halt`) as if it had crashed there (its state is not saved over the new
active replica's), and a promoted one launches it again: it loads the saved state, like a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any

import service.detection.state_codec as state_codec
from alerts.blind import settling
from alerts.commits import Replay, replay
from alerts.engine import evaluate
from alerts.model import COLLECTOR_FAILURE, CommitEvent, EpochEnd, GroupEvent
from alerts.narrow import narrow
from alerts.state import CommitKey, CycleInputs, DetectionState, LogEndClock
from alerts.thresholds import Thresholds
from collectors.errors import OffsetguardError, StoreWriteError
from collectors.model import ClusterMetadata, OffsetsObservation
from collectors.scope import EVERYTHING, Scope
from service.detection.backlog import AlertBacklog, Planner
from service.detection.change_log import log_changes
from service.detection.epochs import EpochEnds
from service.detection.inputs import (
    SETTLING_KINDS,
    CollectorHealth,
    FailureGrace,
    FreshObservations,
    unranged,
    with_epochs,
)
from service.detection.lifecycle import LifecycleRules, Plan, plan
from service.detection.out_of_scope import resolve_out_of_scope
from service.detection.pace import OffsetsPace
from service.detection.reached import ManyLookup, ReachedAtCache
from service.detection.save_timing import SaveTiming, always_quiet
from service.detection.snapshots import SnapshotTrigger
from service.settings import DetectionSettings
from service.state import LatestObservations
from store.alert_records import Alert, AlertWrite, Fingerprint
from store.alerts import AlertStore
from store.notification_records import Change

log = logging.getLogger(__name__)
_KIND = attrgetter("kind")

Event = CommitEvent | GroupEvent
Listener = Callable[[Sequence[Alert]], Awaitable[None]]
# Told of the transitions of an evaluation the store could not take (kept in memory meanwhile), before the
# listeners; ``seq`` 0: they have none yet.
UnstoredListener = Callable[[Sequence[Change]], Awaitable[None]]
# The tail waits (back-pressure) while this many events are queued, and the queue is then evaluated
# without waiting for the minimum interval. It bounds a catch-up's memory: an event with its strings
# is ~300 bytes, and one evaluation's worth is held beside the next one's queue (at 200,000, a warm
# restart reading 160,000 commits behind it peaked ~100 MB higher, resident, for good).
MAX_PENDING_EVENTS = 50_000
RETRY_SECONDS = 2.0
HOLD_POLL_SECONDS = 0.1  # while held (DetectionLoop.hold), how often the condition is asked


class DetectionLoop:
    """Start with :meth:`start` in a running loop; :meth:`stop` evaluates what is queued and saves state."""

    def __init__(
        self,
        cluster: str,
        settings: DetectionSettings,
        *,
        latest: LatestObservations,
        alerts: AlertStore,
        health: CollectorHealth | None = None,
        log_end_reached_at: LogEndClock | None = None,
        log_end_reached_at_many: ManyLookup | None = None,
        tail_live: Callable[[], bool] = lambda: False,
        snapshots: SnapshotTrigger | None = None,
        listeners: Sequence[Listener] = (),
        unstored_listeners: Sequence[UnstoredListener] = (),
        epoch_ends: EpochEnds | None = None,
        clock: Callable[[], float] = time.time,
        tick_seconds: float = 10.0,
        blind_gap_seconds: float | None = None,
        scope: Scope = EVERYTHING,
    ) -> None:
        self.cluster = cluster
        self._scope = scope  # what the sources hand in; a saved state and firing alerts are narrowed to it
        self._where = {"cluster": cluster}  # the extra= of its log lines (service.logs)
        self._settings = settings
        self._thresholds: Thresholds = settings.thresholds()
        if blind_gap_seconds is not None:  # a gap in the offsets observations this long is a blind spell
            self._thresholds = replace(self._thresholds, blind_gap_seconds=blind_gap_seconds)
        self._rules = LifecycleRules(settings.quiet_period_seconds, settings.resolve_after_clean)
        self._fresh = FreshObservations(cluster, latest)
        self._latest = latest
        self._epoch_ends = epoch_ends  # KIP-320 answers for epoch_divergence (asks Kafka: blocking)
        self._alerts = alerts
        self._health = health
        self._log_end = (
            ReachedAtCache(log_end_reached_at, log_end_reached_at_many)
            if log_end_reached_at is not None
            else None
        )
        self.tail_live = tail_live  # True while the tail delivers every commit (then polls only seed)
        self._snapshots = snapshots
        self._listeners = list(listeners)
        self._unstored_listeners = list(unstored_listeners)
        self.backlog = AlertBacklog()
        self._clock = clock
        self._tick = tick_seconds
        self._pace = OffsetsPace(settings.offsets_wait_seconds)
        self.state = DetectionState()
        self._streaks: dict[Fingerprint, int] = {}
        self._grace = FailureGrace(settings.collector_failure_grace_seconds)
        self._pending: list[Event] = []
        # the latest offset (None: a tombstone) per group-partition in queued or in-flight events, with
        # the number of the add_events batch that brought it (see _urgent)
        self._unevaluated: dict[CommitKey, tuple[int | None, int]] = {}
        self._batches = 0
        self._due: float | None = None  # monotonic time of the next evaluation
        self._last_start = float("-inf")  # monotonic time the last evaluation started
        self._wake = asyncio.Event()
        self._one_at_a_time = asyncio.Lock()
        self._drained = asyncio.Event()
        self._loaded = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._hold: tuple[Callable[[], bool], float] | None = None  # see hold()
        self._save_timing = SaveTiming(settings.state_save_seconds, time.monotonic())
        # seconds until /metrics next renders, as its endpoint expects (set by the runtime): saves wait
        # for room (service.detection.save_timing)
        self.metrics_quiet_for: Callable[[], float] = always_quiet
        self._saved: DetectionState | None = None  # the state as last saved or loaded (see _save_state)
        self._stored: Sequence[state_codec.Chunk | None] = ()  # what the store holds of this loop's last save
        self.evaluations = 0

    def add_listener(self, listener: Listener) -> None:
        """Also tell ``listener`` of every evaluation's alerts, once they are stored."""
        self._listeners.append(listener)

    # ------------------------------------------------------------------ feeding

    async def observe(self, observation: Any) -> None:
        """Scheduler sink: a collector produced an observation (already in ``latest``): log offsets evaluate
        now, any other observation with the next log offsets (:mod:`service.detection.pace`)."""
        if getattr(observation, "cluster", self.cluster) != self.cluster:
            return
        if isinstance(observation, OffsetsObservation):
            self._pace.offsets_arrived()
            self._schedule(0.0)
        else:
            self._schedule(self._pace.delay(0.0))

    async def add_events(self, events: Sequence[Event]) -> None:
        """Queue tail events; waits while too many are queued (the tail then reads more slowly)."""
        if not events:
            return
        while len(self._pending) >= MAX_PENDING_EVENTS and not self._stopping:
            self._schedule(0.0, urgent=True)  # the tail waits on it: not held for the interval
            self._drained.clear()
            await self._drained.wait()
        self._pending.extend(events)
        debounce = self._settings.debounce_seconds
        if self._urgent(events):
            self._schedule(debounce, urgent=True)
        else:
            self._schedule(self._pace.delay(debounce))

    def _urgent(self, events: Sequence[Event]) -> bool:
        """A tombstone, or a commit below the last offset known for its group-partition: a possible
        incident, not to be held back by the minimum interval. Known: the latest offset of the events
        queued or being evaluated (a commit arriving while the previous one is still in flight is
        compared with that one), else the state's. Records ``events`` as the latest."""
        self._batches += 1
        urgent = False
        for e in events:
            if not isinstance(e, CommitEvent):
                continue
            key = CommitKey(e.group, e.topic, e.partition)
            if key in self._unevaluated:
                before = self._unevaluated[key][0]
            else:
                point = self.state.commits.get(key)
                before = point.offset if point is not None else None
            if e.offset is None or (before is not None and e.offset < before):
                urgent = True
            self._unevaluated[key] = (e.offset, self._batches)
        return urgent

    def _evaluated(self, upto: int) -> None:
        """The state now holds the events of batches up to ``upto``: forget their offsets."""
        self._unevaluated = {k: v for k, v in self._unevaluated.items() if v[1] > upto}

    def _schedule(self, delay: float, *, urgent: bool = False) -> None:
        due = time.monotonic() + delay
        if not urgent:
            due = max(due, self._last_start + self._settings.min_evaluation_interval_seconds)
        if self._due is None or due < self._due:
            self._due = due
            self._wake.set()

    # ------------------------------------------------------------------ running

    def launch(self) -> None:
        """Load the saved state and run the worker, in the background: returns at once. Observations and
        tail events arriving before the state is loaded are kept and evaluated once it is (a restart's
        first collections need not wait for a large state to be read)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"detect:{self.cluster}")

    async def start(self) -> None:
        """:meth:`launch`, then wait until the saved state is loaded."""
        self.launch()
        await self._loaded.wait()

    async def _load(self) -> bool:
        """Read the saved state, retrying while the store fails; False if stopped before it was read."""
        while not self._stopping:
            try:
                saved = await asyncio.to_thread(self._alerts.load_state, self.cluster)
            except OffsetguardError as exc:
                log.warning(
                    "detection %s: saved state not read, retrying: %s", self.cluster, exc, extra=self._where
                )
                await asyncio.sleep(RETRY_SECONDS)
                continue
            except Exception:  # a bug must not end detection unseen: logged, tried again
                log.exception("detection %s: saved state not read, retrying", self.cluster, extra=self._where)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if saved is not None and saved.format in state_codec.READS:
                try:  # in a thread: a fleet's state takes about a second to decode
                    self.state = await asyncio.to_thread(
                        state_codec.load, saved.body, saved.format, saved.parts
                    )
                    if saved.format == state_codec.FORMAT:  # else saved again, in today's format
                        self._saved = self.state
                except (ValueError, KeyError, TypeError) as exc:
                    log.warning(
                        "detection %s: saved state unreadable, starting empty: %s",
                        self.cluster,
                        exc,
                        extra=self._where,
                    )
            self.state = narrow(self.state, self._scope)
            await self._resolve_out_of_scope()
            self._loaded.set()
            return True
        return False

    async def _resolve_out_of_scope(self) -> None:
        """Alerts stored for groups or topics now out of scope are resolved (and reported as such)."""
        try:
            written = await asyncio.to_thread(
                resolve_out_of_scope, self._alerts, self.cluster, self._scope, self._clock()
            )
        except OffsetguardError as exc:  # tried again at the next start; nothing new fires for them
            log.warning(
                "detection %s: alerts out of scope not resolved: %s", self.cluster, exc, extra=self._where
            )
            return
        if written:
            log.info(
                "detection %s: %d alerts out of scope resolved", self.cluster, len(written), extra=self._where
            )
            await self._report([(a, "resolved") for a in written])

    def tail_stopping(self) -> None:
        """Its tail is about to stop cleanly: it hands over every record it read before it stops, so
        what :meth:`stop` evaluates (the tail's last events, a committed poll taken meanwhile) is judged
        with the tail as it is now. Read after the stop, a live tail would count as gone: its last
        tombstones judged as if records could be missing, and a poll taken since the tail last was live
        trusted over its commits. (A poll taken under the live tail only seeds whenever it is judged:
        :attr:`collectors.model.CommittedObservation.under_tail`.)"""
        live = self.tail_live()
        self.tail_live = lambda: live

    async def stop(self) -> None:
        """Evaluate anything still queued, wait for snapshots under way, save the state. A loop never
        launched does nothing: it has no state of its own to save over the one saved. A caller stopping
        the loop's tail first tells it so (:meth:`tail_stopping`)."""
        self._stopping = True
        self._drained.set()
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            await task  # the worker finishes its evaluation in hand (a thread cannot be cancelled)
        if not self._loaded.is_set():  # never launched, or stopped before its saved state was read
            if task is not None:
                log.warning(
                    "detection %s: stopped before its state was read; %d queued events not evaluated",
                    self.cluster,
                    len(self._pending),
                    extra=self._where,
                )
            return
        if self._pending or self.backlog.keeping:  # the evaluation writes the backlog first
            await self.evaluate_now()
        if self.backlog.keeping:
            log.error(
                "detection %s: %d alert writes kept in memory are lost at stop: the store still refuses "
                "writes (the state saved before replays what it can at the next start)",
                self.cluster,
                len(self.backlog),
                extra=self._where,
            )
        if self._snapshots is not None:
            await self._snapshots.drain()
        await self._save_state()

    async def halt(self, timeout: float = 30.0) -> None:
        """Stop the worker without evaluating what is queued or saving the state (this replica lost the
        leader lease: the active one owns the saved state now), then forget everything since launch, so
        that :meth:`launch` loads the saved state again. An evaluation in hand finishes (its write is
        refused by the fencing guard) unless it takes longer than ``timeout``."""
        self._stopping = True
        self._drained.set()
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self.state = DetectionState()
        self._saved = None
        self._stored = ()
        self.backlog = AlertBacklog()
        self._streaks = {}
        self._grace = FailureGrace(self._settings.collector_failure_grace_seconds)
        self._pending = []
        self._unevaluated = {}
        self._due = None
        self._last_start = float("-inf")
        self._hold = None
        self._loaded.clear()
        self._stopping = False

    async def _run(self) -> None:
        if not await self._load():
            return
        while not self._stopping:
            await self._wait_until_due()
            if self._stopping:
                return
            try:
                await self.evaluate_now()
            except Exception:  # a bug must not end detection; the next trigger tries again
                log.exception("detection %s: evaluation crashed", self.cluster, extra=self._where)
                self._schedule(RETRY_SECONDS)
            if self._save_timing.due(time.monotonic(), self.metrics_quiet_for):
                await self._save_state()

    def hold(self, until: Callable[[], bool], seconds: float) -> None:
        """Evaluate nothing before ``until()`` says so (at most ``seconds`` from now, and not while the
        queue is full): a promoted replica's tail replays the commits since the saved state first, so that
        a poll (which only shows where a group is now) does not become the baseline they are history to."""
        self._hold = (until, time.monotonic() + seconds)

    def _held(self, now: float) -> bool:
        if self._hold is None:
            return False
        until, deadline = self._hold
        if now < deadline and len(self._pending) < MAX_PENDING_EVENTS and not until():
            return True
        self._hold = None
        return False

    async def _wait_until_due(self) -> None:
        while not self._stopping:
            now = time.monotonic()
            if self._held(now):
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), HOLD_POLL_SECONDS)
                continue
            if self._due is None:
                self._due = now + self._tick
            if self._due <= now:
                self._due = None
                self._last_start = now
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._due - now)

    async def evaluate_now(self) -> tuple[Alert, ...]:
        """One evaluation of everything fresh and queued; the alerts it wrote (already stored)."""
        events, self._pending = self._pending, []
        taken = self._batches
        self._drained.set()
        async with self._one_at_a_time:
            try:
                written, stored = await asyncio.to_thread(self._evaluate, events)
            except OffsetguardError as exc:
                log.warning(
                    "detection %s: alerts not stored, will retry: %s", self.cluster, exc, extra=self._where
                )
                self._pending[:0] = events
                self._schedule(RETRY_SECONDS)
                return ()
            self.evaluations += 1
            self._evaluated(taken)
        if written:
            if not stored:
                await self._tell_unstored(written)
            await self._report(written)
        return tuple(a for a, _ in written)

    def _evaluate(self, events: list[Event]) -> tuple[list[tuple[Alert, str | None]], bool]:
        """Blocking: detectors, lifecycle and the alert transaction. Advances the state only once the
        alerts are stored or kept (:meth:`_write`); whether they were stored."""
        now = self._clock()
        fresh = self._fresh.peek()
        o = fresh.observations
        if self._log_end is not None and o.get("offsets") is not None:
            self._log_end.observe(o["offsets"])
        inputs = CycleInputs(
            self.cluster,
            metadata=o.get("metadata"),
            offsets=o.get("offsets"),
            groups=o.get("groups"),
            committed=o.get("committed"),
            configs=o.get("configs"),
            metrics=o.get("metrics"),
            commit_events=tuple(e for e in events if isinstance(e, CommitEvent)),
            group_events=tuple(e for e in events if isinstance(e, GroupEvent)),
            tail_live=self.tail_live(),
            collectors=self._health(now) if self._health is not None else (),
            log_end_reached_at=self._log_end,
        )
        replayed = None
        if self._epoch_ends is not None:
            replayed = replay(self.state, inputs)  # replayed once, not twice: evaluate reuses it
            inputs = replace(inputs, epoch_ends=self._ask_epoch_ends(inputs, replayed))
        findings, state = evaluate(self.state, inputs, now, self._thresholds, replayed)
        # Degraded: this cycle found a failure, or the scheduler's statuses (which outlive the observation
        # that carried a partial failure) say so.
        failing = COLLECTOR_FAILURE in map(_KIND, findings)  # in C: a fleet's firing lag findings are many
        self._grace.update(failing or (self._health is not None and self._health.degraded(now)), now)
        covered = self._grace.covered(fresh.covered())
        # every epoch end known: a divergence not found is none (inputs.py)
        covered = with_epochs(covered, self._epoch_ends is not None and self._epoch_ends.complete)
        if settling(state.blind_spans, now, self._thresholds.rate_min_span_seconds):  # rates cannot judge yet
            covered -= SETTLING_KINDS
        holding = self._grace.holding(now)
        missing = unranged(fresh)
        planned: list[Plan] = []

        def planner(
            firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
        ) -> Sequence[AlertWrite]:  # called again (on the backlog) if the store refuses the write
            kept = (
                [f for f in findings if not (f.kind == COLLECTOR_FAILURE and f.fingerprint not in firing)]
                if holding
                else findings
            )
            p = plan(
                firing, kept, covered, self._streaks, now, self._rules, resolved=resolved, unranged=missing
            )
            planned.append(p)
            return p.writes

        written, stored = self._write(planner, now)
        self._streaks = dict(planned[-1].clean_streaks)
        self.state = state
        self._fresh.taken(fresh)
        return [(a, w.transition) for a, w in zip(written, planned[-1].writes, strict=True)], stored

    def _write(self, planner: Planner, now: float) -> tuple[Sequence[Alert], bool]:
        """Blocking: what is kept from earlier evaluations, then this one's writes; where the disk refuses
        them, they are kept (the firing alerts as stored are read to plan from). The alerts as written or
        kept, and whether they were stored."""
        if self.backlog.keeping:
            try:
                flushed = self.backlog.flush(self._alerts, self.cluster)
            except StoreWriteError:
                return self.backlog.plan(planner, now), False
            log.warning(
                "detection %s: %d alert writes kept while the store failed are stored",
                self.cluster,
                flushed,
                extra=self._where,
            )
        since = now - self._settings.quiet_period_seconds
        try:
            return self._alerts.update_firing(self.cluster, planner, now, resolved_since=since), True
        except StoreWriteError:
            self.backlog.start(self._alerts.firing(self.cluster))  # reads go on; raises if not
            return self.backlog.plan(planner, now), False

    async def _tell_unstored(self, written: Sequence[tuple[Alert, str | None]]) -> None:
        at = self._clock()
        changes = [Change(0, t, at, a.severity, a.cause, a) for a, t in written if t is not None]
        for listener in self._unstored_listeners:
            try:
                await listener(changes)
            except Exception:
                log.exception("detection %s: unstored alert listener failed", self.cluster, extra=self._where)

    def _ask_epoch_ends(self, inputs: CycleInputs, rp: Replay) -> tuple[EpochEnd, ...]:
        """Blocking: where the epochs of older-epoch commits end on their leaders; () if that fails."""
        assert self._epoch_ends is not None
        meta = inputs.metadata or self._latest.get(self.cluster, ClusterMetadata)
        try:
            return self._epoch_ends(rp.commits, meta, (self.state.commits, rp.changed))
        except Exception:  # a bug here must not cost the other detectors their evaluation
            log.exception("detection %s: epoch ends not asked", self.cluster, extra=self._where)
            self._epoch_ends.complete = False
            return ()

    async def _report(self, written: Sequence[tuple[Alert, str | None]]) -> None:
        log_changes(self.cluster, written, self._where)
        if self._snapshots is not None:
            self._snapshots.request([a for a, t in written if t in ("fired", "repeated")])
        alerts = [a for a, _ in written]
        for listener in self._listeners:
            try:
                await listener(alerts)
            except Exception:
                log.exception("detection %s: alert listener failed", self.cluster, extra=self._where)

    async def _save_state(self) -> None:
        self._save_timing.begin(time.monotonic())
        state = self.state
        if state is self._saved:
            return  # nothing evaluated since it was saved (or loaded): the store holds it already
        held, self._stored = self._stored, ()  # (until this save is known to be stored)

        def save() -> list[state_codec.Chunk | None]:
            # In the thread too: a large state takes a while. The parts are encoded as the store writes
            # them, so a save never holds the state's 18 MB of text at once; a part whose rows are the
            # very objects of the part at its place in the last save is neither encoded nor written again.
            body, parts, chunks = state_codec.encode_changes(state, held)
            self._alerts.save_state(self.cluster, body, state_codec.FORMAT, self._clock(), parts)
            return chunks

        try:
            self._stored = await asyncio.to_thread(save)
            self._saved = state
            self._save_timing.end(time.monotonic())
        except StoreWriteError:  # the disk refuses writes: the store's health logs it, once
            pass
        except OffsetguardError as exc:
            log.warning("detection %s: state not saved: %s", self.cluster, exc, extra=self._where)
        except Exception:  # a bug must not end detection: logged; the next save writes every part
            log.exception("detection %s: state not saved", self.cluster, extra=self._where)
