"""The running parts of the service (store, collectors, scheduler), started and stopped as one.

With ``ha`` on (issue 46, docs/ha.md) a :class:`~service.ha.Leadership` decides whether this replica is
active: the collectors run either way, the writers (tails, detection, notifications, maintenance) only on
the active replica, started at promotion and stopped at step-down (:class:`~service.ha.ActiveWriters`).
With ``ha`` off the service runs everything, as a single replica always did: no lease, no extra cost."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from collectors.compat import Fallbacks
from collectors.model import ClusterMetadata, GroupsObservation
from collectors.reconcile import Reconciler
from collectors.scope import EVERYTHING, Scope
from collectors.settings import ClusterSettings
from collectors.tail import OffsetsTail
from collectors.tail_committed import TailCommitted
from collectors.tail_model import TailSink
from collectors.tail_progress import tune_gc
from collectors.tail_sinks import RecentEvents
from service.detection import DetectionLoop, FanOutSink, build_detection, snapshot_rate_limit
from service.ha import STANDBY, ActiveWriters, GatedPositions, Leadership, ha_enabled, replica_id
from service.held_writes import HeldWrites
from service.notify.dispatcher import Dispatcher, build_dispatcher
from service.runs import FIRST_PICTURE
from service.scheduler import CollectorJob, Scheduler
from service.settings import Settings
from service.state import LatestObservations
from store import Store
from store.alerts import AlertStore
from store.db import connect_to
from store.fencing import fence_alerts
from store.lease import Lease
from store.notifications import NotificationStore

log = logging.getLogger(__name__)

DETECTION_LAUNCH_WAIT_S = 15.0  # detection starts at most this long after the collectors
# The tails and the store's first history writes wait for the first picture to be served (the FIRST_PICTURE
# collectors' first runs in, then the first complete /metrics rendered), at most FIRST_PICTURE_WAIT_S. A tail
# catching up reads __consumer_offsets from its saved position (all of it on a first start), and the first
# writes compare (on a fresh store: write) every partition and group-partition: seconds of CPU that the
# first collections and the first render would otherwise share.
FIRST_PICTURE_WAIT_S = 10.0


class Runtime:
    """Everything the HTTP layer reads from; built by :func:`build_runtime` or by tests with fakes."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None,
        latest: LatestObservations,
        jobs: list[CollectorJob],
        closers: list[Callable[[], None]] | None = None,
        tails: Sequence[OffsetsTail] = (),
        detections: Sequence[DetectionLoop] = (),
        alerts: AlertStore | None = None,
        notifications: NotificationStore | None = None,
        notifier: Dispatcher | None = None,
        fallbacks: Sequence[Fallbacks] = (),
        scopes: Mapping[str, Scope] | None = None,
        leadership: Leadership | None = None,
        reconcilers: Sequence[Reconciler] = (),
        held: Sequence[HeldWrites] = (),
    ) -> None:
        self.settings = settings
        # ha on: whether this replica is the active one (its writers are set by build_runtime)
        self.leadership = leadership
        # per cluster: which groups and topics are watched; the same objects the collectors and tails use
        self.scopes = dict(scopes) if scopes is not None else {c.name: Scope.of(c) for c in settings.clusters}
        self.fallbacks = list(fallbacks)  # per cluster: Kafka APIs its brokers lack (collectors.compat)
        self.store = store
        self.latest = latest
        maintenance = []
        if store is not None:
            maintenance.append(("store:thin", 3600.0, self._thin_store))
        if alerts is not None:
            maintenance.append(("store:prune_alerts", 3600.0, self._prune_alerts))
        self.scheduler = Scheduler(
            jobs, stale_after_intervals=settings.stale_after_intervals, maintenance=maintenance
        )
        self._closers = closers or []
        self.tails = list(tails)  # one __consumer_offsets tail per cluster (settings.tail.enabled)
        self.detections = list(detections)  # one detection loop per cluster (settings.detection.enabled)
        self.alerts = alerts
        self.notifications = notifications  # the notification queue and silences (settings.notify.enabled)
        self.notifier = notifier
        # per cluster with a tail: its committed offsets from the tail, reconciled by the committed poll
        self.reconcilers = list(reconcilers)
        for writer in (alerts, notifications):  # one file, one health: any class's failed write marks it
            if store is not None and writer is not None:
                writer.health = store.health
        self.held = list(held)  # the store's history writes, held while the first picture is made
        # start() was called, and what it said the first complete /metrics render is (``before_detection``)
        self._started = asyncio.Event()
        self._before: Callable[[], Awaitable[object]] | None = None
        self._launching: asyncio.Task[None] | None = None
        self._collecting = False
        self._stopped = False
        self._tailing: asyncio.Task[None] | None = None

    async def start(
        self,
        *,
        before_detection: Callable[[], Awaitable[object]] | None = None,
        metrics_quiet_for: Callable[[], float] | None = None,
    ) -> None:
        """Start the collectors, the tails and the notifier now (unless :meth:`start_collecting` has),
        detection once the first collections are in and then ``before_detection`` has returned (the first
        complete ``/metrics`` render: reading a fleet's detection state beside it would slow the first
        picture), at most :data:`DETECTION_LAUNCH_WAIT_S` after now either way.

        With a leadership: the collectors now, the rest once (and while) this replica is active.

        The broker-metrics scrapes start after ``before_detection`` too (:class:`CollectorJob` ``after``):
        exporters listing every partition cost the brokers CPU their answers to the first collections and
        the first render would share.

        ``metrics_quiet_for``: seconds until ``/metrics`` next renders; detection saves its state then
        (:mod:`service.detection.save_timing`)."""
        self._before = before_detection
        self._started.set()
        if metrics_quiet_for is not None:
            for detection in self.detections:
                detection.metrics_quiet_for = metrics_quiet_for
        await self.start_collecting()
        if self.leadership is not None or self._launching is not None:
            return
        # Detection reads its saved state (about a second of CPU for a fleet's) once the first collections
        # are in, so that neither they nor the server wait for it: readiness and /metrics need none of it.
        # Observations and tail events arriving before then are kept and evaluated once it is read.
        self._launching = asyncio.get_running_loop().create_task(self._launch_detection(before_detection))

    async def start_collecting(self) -> None:
        """Start the notifier, the collectors and the tails (once: :meth:`start` does it if not done yet).
        ``offsetguard serve`` calls it before it imports the HTTP app, so that the first collections' round
        trips to Kafka overlap those imports. With a leadership: the collectors and the lease."""
        if self._collecting:
            return
        self._collecting, self._stopped = True, False
        # The first complete render gates the collectors with ``after``: known once start() is called,
        # which ``offsetguard serve`` does after the HTTP app's imports, when the first runs may be in.
        self.scheduler.gate(self._first_render)
        for held in self.held:
            held.hold(self.first_picture_served)
        if self.leadership is not None:
            self.scheduler.start()
            tune_gc()
            await self.leadership.start()
            return
        if self.notifier is not None:
            await self.notifier.start()
        self.scheduler.start()
        if self.tails:
            tune_gc()
            self._tailing = asyncio.get_running_loop().create_task(self._start_tails())

    async def _first_render(self) -> None:
        """Until the first complete ``/metrics`` render (``before_detection``), once :meth:`start` said
        what it is; at once if it said none."""
        await self._started.wait()
        if self._before is not None:
            await self._before()

    async def first_picture_served(self) -> bool:
        """Wait until the first picture is served: the :data:`FIRST_PICTURE` collectors' first runs in,
        then the first complete render (:meth:`_first_render`); at most :data:`FIRST_PICTURE_WAIT_S`. True
        if it was served by then; never raises."""
        deadline = time.monotonic() + FIRST_PICTURE_WAIT_S
        if not await self.scheduler.first_round(FIRST_PICTURE_WAIT_S, FIRST_PICTURE):
            return False
        try:
            await asyncio.wait_for(self._first_render(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            return False
        except Exception:  # whatever happened to the render, what waits for it goes on
            log.exception("waiting for the first complete /metrics failed")
            return False
        return True

    async def _start_tails(self) -> None:
        if not await self.first_picture_served():
            log.info("the tails start before the first picture was served (%.0f s)", FIRST_PICTURE_WAIT_S)
        for tail in self.tails:
            tail.start()

    async def _launch_detection(self, before: Callable[[], Awaitable[object]] | None) -> None:
        deadline = time.monotonic() + DETECTION_LAUNCH_WAIT_S
        if not await self.scheduler.first_round(DETECTION_LAUNCH_WAIT_S):
            log.info("detection starts before every first collection is in (%.0f s)", DETECTION_LAUNCH_WAIT_S)
        elif before is not None:
            try:
                await asyncio.wait_for(before(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                log.info("detection starts before a complete /metrics (%.0f s)", DETECTION_LAUNCH_WAIT_S)
            except Exception:  # detection must start whatever happened to the first render
                log.exception("detection starts: waiting for the first complete /metrics failed")
        for detection in self.detections:
            detection.launch()

    async def stop(self) -> None:
        """Finish the cycle in progress, stop the tails (they save positions), then release clients and
        flush/close the store. A second call before the next start returns at once (``offsetguard serve``
        stops the runtime after the app's lifespan did, in case the server never started)."""
        if self._stopped:
            return
        self._stopped, self._collecting = True, False
        if self.leadership is not None:
            await self.scheduler.shutdown()
            await self.leadership.stop()  # the active one stops its writers as below, then releases the lease
            await self._close()
            return
        launching, self._launching = self._launching, None
        if launching is not None and not launching.done():
            launching.cancel()  # detection not started: stopping it keeps its saved state as it is
        tailing, self._tailing = self._tailing, None
        if tailing is not None and not tailing.done():
            tailing.cancel()  # the tails not started: stopping them saves nothing new
        await self.scheduler.shutdown()
        self._started.clear()
        # the held history writes, before anything stops: detection and the store expect them written
        await asyncio.gather(*(held.flush() for held in self.held))
        for detection in self.detections:
            detection.tail_stopping()  # what it evaluates at stop is judged with the tail as it was
        await asyncio.gather(*(tail.stop() for tail in self.tails))
        # After the tails: their last batch is evaluated and the detection state saved.
        await asyncio.gather(*(detection.stop() for detection in self.detections))
        # After detection: its last transitions are queued (and sent at the next start if not now).
        if self.notifier is not None:
            await self.notifier.stop()
        await self._close()

    async def _close(self) -> None:
        for close in self._closers:
            try:
                await asyncio.to_thread(close)
            except Exception:  # closing must go on for the others
                log.exception("error while closing a client")
        if self.notifications is not None:
            await asyncio.to_thread(self.notifications.close)
        if self.alerts is not None:
            await asyncio.to_thread(self.alerts.close)
        if self.store is not None:
            await asyncio.to_thread(self.store.close)

    def _writes(self) -> bool:
        """Maintenance writes: always on a single replica, on the active one (lease held) with ha on."""
        return self.leadership is None or self.leadership.may_write()

    async def _thin_store(self) -> None:
        if self.store is not None and self._writes():
            counts = await asyncio.to_thread(self.store.thin, time.time())
            log.info("store thinned: %s", counts)

    async def _prune_alerts(self) -> None:
        if self.alerts is not None and self._writes():
            before = time.time() - self.settings.store.alerts_retention_days * 86400.0
            pruned = await asyncio.to_thread(self.alerts.prune, before)
            if pruned.alerts:
                log.info("store: deleted %s (resolved before the alert retention)", pruned)

    def scope(self, cluster: str) -> Scope:
        """``cluster``'s scope (everything for a cluster known only from the store's history)."""
        return self.scopes.get(cluster, EVERYTHING)

    def scope_report(self) -> list[dict[str, Any]]:
        """Per cluster: its scope's patterns and what they left out in the last cycle (None: not yet)."""
        out = []
        for name, scope in self.scopes.items():
            groups = self.latest.get(name, GroupsObservation)
            meta = self.latest.get(name, ClusterMetadata)
            out.append(
                {
                    "cluster": name,
                    **scope.as_dict(),
                    "excluded_groups": groups.excluded if groups is not None else None,
                    "excluded_topics": meta.excluded_topics if meta is not None else None,
                }
            )
        return out

    def readiness(self, now: float) -> dict[str, Any]:
        statuses = self.scheduler.statuses()
        stale = [s for s in statuses if s.stale(now, self.scheduler.stale_after_intervals)]
        standby = self.leadership is not None and self.leadership.role == STANDBY
        # a standby runs no tail: it is ready (it serves the API and /metrics), the payload says standby
        catching_up = (
            [] if standby else [f"tail:{t.cluster} catching up" for t in self.tails if not t.caught_up]
        )
        store = self.store.health.view() if self.store is not None else None
        failing = [f"store failing: {store.reason}"] if store is not None and not store.healthy else []
        return {
            "ready": not stale and not catching_up and not failing,
            "stale": [f"{s.cluster}:{s.name}" for s in stale],
            "reasons": [f"stale:{s.cluster}:{s.name}" for s in stale] + catching_up + failing,
            "store": asdict(store) if store is not None else None,
            "collectors": [s.as_dict(now, self.scheduler.stale_after_intervals) for s in statuses],
            "tail": [t.figures().as_dict() for t in self.tails],
            "fallbacks": [c.as_dict() for f in self.fallbacks for c in f.counts()],
            "scope": self.scope_report(),
            "leader": self.leadership.view() if self.leadership is not None else None,
            "reconcile": [r.as_dict() for r in self.reconcilers],
        }


def build_runtime(settings: Settings) -> Runtime:
    """The real runtime: SQLite store, kafka-python seams and every collector of every cluster."""
    from collectors.kafka.seam import KafkaPythonSeam
    from service.wiring import build_cluster_jobs, build_cluster_tail

    store = Store.open(settings.store)
    alerts = AlertStore.open(settings.store) if settings.detection.enabled else None
    notifications = NotificationStore.open(settings.store) if settings.notify.enabled else None
    closers: list[Callable[[], None]] = []
    leadership = None
    # The writers' own store objects: with ha on they are fenced (the API's stay unfenced: an ack or a
    # silence applies through any replica) and their caches are read again inside each guarded write.
    writing_alerts, queue = alerts, notifications
    if ha_enabled(settings):
        lease = Lease(lambda: connect_to(settings.store), replica_id(settings), settings.ha.lease_seconds)
        leadership = Leadership(lease, renew_seconds=settings.ha.renew_seconds, health=store.health)
        store.writer_epoch = _writer_epoch(leadership)  # the store's kept log-end rows hold only then
        if alerts is not None:
            writing_alerts = AlertStore.open(settings.store)
            fence_alerts(writing_alerts, leadership.fence)
            writing_alerts.health = store.health
            closers.append(writing_alerts.close)
        if notifications is not None:
            queue = NotificationStore.open(settings.store)
            queue.guard = leadership.fence
            queue.health = store.health
            closers.append(queue.close)
    notifier = build_dispatcher(settings, queue, fence=leadership) if queue is not None else None
    listeners = [notifier.on_alerts] if notifier is not None else []
    unstored = [notifier.on_unstored] if notifier is not None else []
    rate_limit = snapshot_rate_limit(settings)  # one hourly snapshot budget for all clusters
    latest = LatestObservations()
    jobs: list[CollectorJob] = []
    tails: list[OffsetsTail] = []
    make_tails: list[Callable[[], OffsetsTail]] = []
    writes = leadership.may_write if leadership is not None else None
    detections: list[DetectionLoop] = []
    reconcilers: list[Reconciler] = []
    # held while the first picture is made; not with ha (a standby writes none, a promotion is no start)
    held: list[HeldWrites] | None = [] if leadership is None else None
    fallbacks: list[Fallbacks] = []
    scopes = {c.name: Scope.of(c) for c in settings.clusters}  # one per cluster, shared by every source
    for cluster in settings.clusters:
        scope = scopes[cluster.name]
        seam = KafkaPythonSeam(cluster)  # shared: detection asks it for KIP-320 epoch ends
        fallbacks.append(seam.fallbacks)
        # the tail's view of the committed offsets, which the committed collector serves while the tail is
        # live (told of each new tail below; without one, as on an ha standby, it polls)
        reconciler = (
            Reconciler(
                TailCommitted(cluster.name),
                settings.intervals.reconcile,
                failing_groups=_groups_unseen(latest, cluster.name),
            )
            if settings.tail.enabled
            else None
        )
        cluster_jobs, close = build_cluster_jobs(
            cluster,
            settings,
            latest,
            store,
            seam=seam,
            scope=scope,
            writes=writes,
            reconciler=reconciler,
            held=held,
        )
        jobs.extend(cluster_jobs)
        closers.append(close)
        detection = tail_sink = None
        if alerts is not None and writing_alerts is not None:
            detection, tail_sink = build_detection(
                cluster,
                settings,
                latest,
                store,
                cluster_jobs,
                alerts=writing_alerts,
                rate_limit=rate_limit,
                listeners=listeners,
                unstored_listeners=unstored,
                epoch_ends=seam.offsets_for_leader_epoch,
                scope=scope,
            )
            detections.append(detection)
        if reconciler is not None:
            reconcilers.append(reconciler)
            # the view last: what it serves, detection has been handed already
            parts: list[TailSink] = [RecentEvents()]
            if tail_sink is not None:
                parts.append(tail_sink)
            sink: TailSink = FanOutSink(*parts, reconciler.view)
            if settings.archive.enabled:
                from pipeline.archive import ArchiveSink  # pyarrow: only needed when archiving

                archive = ArchiveSink(settings.archive, sink)
                closers.append(archive.close)  # run after the tails stopped: publishes the open files
                sink = archive
            if leadership is not None:  # a fresh tail per promotion, from the stored positions
                evaluated = _evaluated(detection) if detection is not None else dict
                positions = GatedPositions(store, leadership.may_write, evaluated)
                make_tails.append(
                    _tail_maker(cluster, settings, positions, sink, scope, detection, reconciler)
                )
                continue
            tail = build_cluster_tail(cluster, settings, store, sink=sink, scope=scope)
            tails.append(tail)
            reconciler.attach(tail)
            if detection is not None:
                detection.tail_live = tail.live
    runtime = Runtime(
        settings,
        store=store,
        latest=latest,
        jobs=jobs,
        closers=closers,
        tails=tails,
        detections=detections,
        alerts=alerts,
        notifications=notifications,
        notifier=notifier,
        fallbacks=fallbacks,
        scopes=scopes,
        leadership=leadership,
        reconcilers=reconcilers,
        held=held or (),
    )
    if leadership is not None:
        leadership.writers = ActiveWriters(
            tails=runtime.tails,
            make_tails=make_tails,
            detections=detections,
            notifier=notifier,
            refresh=store.reload_latest,
        )
    return runtime


def _writer_epoch(leadership: Leadership) -> Callable[[], int | None]:
    """The lease epoch this replica writes the history at; None while it may not write."""
    return lambda: leadership.epoch if leadership.may_write() else None


def _tail_maker(
    cluster: ClusterSettings,
    settings: Settings,
    positions: GatedPositions,
    sink: TailSink,
    scope: Scope,
    detection: DetectionLoop | None,
    reconciler: Reconciler,
) -> Callable[[], OffsetsTail]:
    from service.wiring import build_cluster_tail

    def make() -> OffsetsTail:
        tail = build_cluster_tail(cluster, settings, positions, sink=sink, scope=scope)
        reconciler.attach(tail)  # a promotion's tail resumes from the stored positions: seeded anew
        if detection is not None:
            detection.tail_live = tail.live
        return tail

    return make


def _evaluated(detection: DetectionLoop) -> Callable[[], Mapping[int, int]]:
    """The last ``__consumer_offsets`` offset per partition ``detection``'s state has evaluated (read when
    a promoted replica's tail seeks, once the saved state is loaded)."""
    return lambda: dict(detection.state.tail_positions)


def _groups_unseen(latest: LatestObservations, cluster: str) -> Callable[[], tuple[str, ...]]:
    """What the latest groups observation of ``cluster`` could not see (a group ACL taken away shows there
    first): while it lists anything, the committed collector polls instead of serving the tail's view."""

    def unseen() -> tuple[str, ...]:
        groups = latest.get(cluster, GroupsObservation)
        return tuple(f.key for f in groups.failures) if groups is not None else ()

    return unseen
