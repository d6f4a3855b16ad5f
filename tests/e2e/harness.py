"""The real runtime on a sandbox, run for end-to-end incident tests.

:class:`RuntimeThread` runs :func:`service.runtime.build_runtime` in its own event loop in a background
thread, so scenario code stays plain blocking Kafka clients and one runtime can serve a whole module. The
stored alerts are read through a separate :class:`AlertStore` connection, as the HTTP layer would.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from alerts.state import CommitKey
from collectors.model import ClusterMetadata, OffsetsObservation
from sandbox.cluster import SandboxCluster
from service.runtime import Runtime, build_runtime
from service.settings import Settings, load_settings
from store.alert_records import Alert
from store.alerts import AlertStore

T = TypeVar("T")
CLUSTER = "e2e"
# The alert kinds about committed offsets and the data behind them (everything but collector health).
OFFSET_SAFETY_KINDS = frozenset(
    {
        "offset_rewind",
        "offset_skip",
        "committed_below_log_start",
        "committed_beyond_log_end",
        "log_truncation",
        "unclean_leader_election",
        "offsets_lost",
        "epoch_divergence",
        "retention_risk",
        "offsets_expiry_risk",
        "lag_high",
        "consumer_stalled",
        "offsets_topic_cleaner_stalled",
        "out_of_range_fetches",
        "config_risk",
        "topic_deleted",
    }
)


def e2e_settings(kafka: SandboxCluster, tmp: Path, **overrides: Any) -> Settings:
    """Short intervals, a fresh store, snapshots without per-group spacing; ``overrides`` replace sections."""
    base: dict[str, Any] = {
        "clusters": [kafka.cluster_config(CLUSTER)],
        "intervals": {
            "metadata": 1,
            "offsets": 1,
            "groups": 1,
            "committed": 1,
            "configs": 2,
            "broker_metrics": 1,
        },
        "store": {"path": str(tmp / "og.db")},
        "snapshots": {"directory": str(tmp / "snapshots")},
        # the commit archive, for the pipeline-vs-online checks (tests/e2e/pipeline_check.py)
        "archive": {"enabled": True, "directory": str(tmp / "archive"), "fsync": False},
        "tail": {"start_from": "earliest", "checkpoint_seconds": 0.5},
        "detection": {
            "debounce_seconds": 0.05,
            "state_save_seconds": 5,
            "snapshot_group_interval_seconds": 0,
            "snapshot_max_per_hour": 1000,
        },
    }
    base.update(overrides)
    return load_settings(**base)


class RuntimeThread:
    """``build_runtime(settings)`` started in a background event loop; :meth:`stop` stops both."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="e2e-runtime", daemon=True)
        self._thread.start()
        self._stopped = False
        self.runtime: Runtime = self.call(self._build())
        self.alerts = AlertStore.open(settings.store)

    async def _build(self) -> Runtime:
        runtime = build_runtime(self.settings)
        await runtime.start()
        return runtime

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(work, self._loop)
        return future.result(timeout)

    def wait_caught_up(self, timeout: float = 90.0) -> None:
        wait_for(lambda: all(t.caught_up for t in self.runtime.tails), timeout, "tail caught up")

    def stop(self) -> None:
        """Stop the runtime (publishing the archive's open files) and the loop; a second call does nothing."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self.call(self.runtime.stop(), timeout=180.0)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self.alerts.close()

    def observe(self, collector: str) -> bool:
        """One run of the cluster's ``collector`` now, as the scheduler runs it (its observation handed to the
        cache and detection); False if it failed or a scheduled run was in progress."""
        [job] = [j for j in self.runtime.scheduler.jobs if j.collector.name == collector]
        return self.call(job.run_once())

    # ---------------------------------------------------------------- what the runtime sees

    def metadata(self) -> ClusterMetadata | None:
        return self.runtime.latest.get(CLUSTER, ClusterMetadata)

    def offsets(self) -> OffsetsObservation | None:
        return self.runtime.latest.get(CLUSTER, OffsetsObservation)

    def sees_partition(self, topic: str, partition: int = 0, **want: Any) -> bool:
        """Whether the latest metadata/offsets show the partition with every ``want`` field value
        (``leader``, ``isr`` from metadata; ``log_end``, ``log_start`` from offsets)."""
        meta, offsets = self.metadata(), self.offsets()
        info = meta.topic(topic) if meta else None
        part = next((p for p in info.partitions if p.partition == partition), None) if info else None
        ranges = offsets.partitions if offsets else ()
        rng = next((p for p in ranges if (p.topic, p.partition) == (topic, partition)), None)
        for name, value in want.items():
            source = part if name in ("leader", "isr", "leader_epoch") else rng
            if source is None or getattr(source, name) != value:
                return False
        return True

    def sees_commit(self, group: str, topic: str, partition: int, offset: int) -> bool:
        """Whether detection's state holds ``offset`` as the group's committed offset."""
        for detection in self.runtime.detections:
            point = detection.state.commits.get(CommitKey(group, topic, partition))
            if point is not None and point.offset == offset:
                return True
        return False

    def list_alerts(self, **filters: Any) -> list[Alert]:
        return list(self.alerts.list(cluster=CLUSTER, limit=1000, **filters).alerts)

    def new_pages(self, baseline: set[str]) -> list[Alert]:
        """Warning and critical alerts stored since ``baseline`` (the ids there before)."""
        return [
            a for a in self.list_alerts() if a.id not in baseline and a.severity in ("warning", "critical")
        ]

    def wait_alerts(
        self,
        what: str,
        timeout: float = 60.0,
        where: Callable[[Alert], bool] = lambda a: True,
        count: int = 1,
        **filters: Any,
    ) -> list[Alert]:
        """At least ``count`` stored alerts matching ``filters`` and ``where`` (newest first)."""
        found: list[Alert] = []

        def check() -> bool:
            nonlocal found
            found = [a for a in self.list_alerts(**filters) if where(a)]
            return len(found) >= count

        wait_for(check, timeout, what, lambda: f"stored: {[short(a) for a in self.list_alerts()]}")
        return found


def short(a: Alert) -> str:
    return f"{a.kind}/{a.severity}/{a.cause} {a.group} {a.topic}[{a.partition}] {dict(a.magnitude)}"


def wait_for(
    check: Callable[[], Any], timeout: float, what: str, detail: Callable[[], str] = lambda: ""
) -> Any:
    """Poll ``check`` every 0.1 s until it returns something true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached in {timeout:.0f} s. {detail()}")
        time.sleep(0.1)


def retrying(call: Callable[[], T], timeout: float = 60.0) -> T:
    """``call()`` retried on Kafka errors (a coordinator or leader moving)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except (kerr.KafkaError, OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def create_topics(kafka: SandboxCluster, topics: Iterable[NewTopic]) -> None:
    topics = list(topics)
    admin = KafkaAdminClient(**kafka.client_config())
    try:
        with suppress(kerr.TopicAlreadyExistsError):
            admin.create_topics(topics)
        names = [t.name for t in topics]
        wait_for(lambda: _all_led(admin, names), 60, f"leaders for {names}")
    finally:
        admin.close()


def _all_led(admin: KafkaAdminClient, names: list[str]) -> bool:
    try:
        described = admin.describe_topics(names)
    except kerr.KafkaError:
        return False
    return all(t["partitions"] and all(p["leader_id"] >= 0 for p in t["partitions"]) for t in described)


def produce(
    kafka: SandboxCluster, topic: str, count: int, *, partition: int = 0, acks: int | str = "all"
) -> None:
    """``count`` messages to ``topic[partition]``, each acknowledged (fails loudly otherwise)."""
    producer = KafkaProducer(**kafka.client_config(), acks=acks, retries=10)
    try:
        futures = [producer.send(topic, b"m%d" % i, partition=partition) for i in range(count)]
        producer.flush(timeout=60)
        for f in futures:
            f.get(timeout=30)
    finally:
        producer.close()
