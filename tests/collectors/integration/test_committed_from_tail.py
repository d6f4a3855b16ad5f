"""The committed offsets from the live tail on the real sandbox, wired as the service wires them: a real
consumer's commits and an OffsetDelete followed without any OffsetFetch, then a reconciliation that finds
nothing the tail missed."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from collectors.kafka.seam import KafkaPythonSeam
from collectors.model import CommittedObservation, CommittedOffset
from collectors.reconcile import Reconciler
from collectors.tail_committed import TailCommitted
from collectors.tail_sinks import RecentEvents
from sandbox.cluster import SandboxCluster
from service.detection import FanOutSink
from service.settings import load_settings
from service.state import LatestObservations
from service.wiring import build_cluster_jobs, build_cluster_tail
from tests.collectors.tail.sandbox_it import ensure_topic, retrying, until

pytestmark = pytest.mark.integration


class CountingSeam:
    """The real seam, counting the requests the committed poll makes."""

    def __init__(self, seam: KafkaPythonSeam) -> None:
        self._seam = seam
        self.calls: Counter[str] = Counter()

    def list_groups(self, broker_id: int) -> Any:
        self.calls["list_groups"] += 1
        return self._seam.list_groups(broker_id)

    def fetch_offsets(self, coordinator_id: int, group_ids: Sequence[str]) -> Any:
        self.calls["fetch_offsets"] += 1
        return self._seam.fetch_offsets(coordinator_id, group_ids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._seam, name)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_committed_kafka1_from_tail_without_offset_fetch_then_reconciled_clean(
    kafka1: SandboxCluster,
) -> None:
    topic, group = f"tc-{uuid.uuid4().hex[:8]}", f"tc-g-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    ensure_topic(admin, topic, 2)
    config = kafka1.cluster_config("it") | {"groups": {"include": [group]}}
    settings = load_settings(clusters=[config], tail={"start_from": "latest"})
    [cluster] = settings.clusters
    seam = CountingSeam(KafkaPythonSeam(cluster))
    clock = Clock()  # the reconciliation's minute passes when the test says so
    reconciler = Reconciler(TailCommitted(cluster.name), settings.intervals.reconcile, monotonic=clock)
    latest = LatestObservations()
    jobs, close = build_cluster_jobs(cluster, settings, latest, None, seam=seam, reconciler=reconciler)
    [job] = [j for j in jobs if j.collector.name == "committed"]
    tail = build_cluster_tail(cluster, settings, None, sink=FanOutSink(RecentEvents(), reconciler.view))
    reconciler.attach(tail)
    consumer = KafkaConsumer(
        bootstrap_servers=kafka1.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    async def committed() -> CommittedObservation:
        assert await job.run_once(), job.status.last_error
        obs = latest.get(cluster.name, CommittedObservation)
        assert obs is not None
        return obs

    def offsets(obs: CommittedObservation) -> dict[tuple[str, int], int]:
        return {(o.topic, o.partition): o.offset for o in obs.offsets if o.group == group}

    tail.start()
    try:
        await until(lambda: tail.caught_up and tail.state == "running", what="tail caught up")
        await committed()  # the seed: a poll (ListGroups; the group has no offsets yet)
        seeded = dict(seam.calls)
        assert seeded.get("list_groups", 0) == 1

        consumer.assign([tp0, tp1])
        await asyncio.to_thread(
            retrying,
            lambda: consumer.commit({tp0: OffsetAndMetadata(5, "m", -1), tp1: OffsetAndMetadata(7, "", -1)}),
        )
        await until(lambda: reconciler.view.get((group, topic, 1)) is not None, what="the commits told")
        clock.now = 5.0
        assert offsets(await committed()) == {(topic, 0): 5, (topic, 1): 7}
        obs = latest.get(cluster.name, CommittedObservation)
        assert obs is not None and CommittedOffset(group, topic, 0, 5, None, "m") in obs.offsets

        consumer.close()
        await asyncio.to_thread(retrying, lambda: admin.delete_group_offsets(group, [tp0]))
        await until(lambda: reconciler.view.get((group, topic, 0)) is None, what="the OffsetDelete told")
        clock.now = 10.0
        assert offsets(await committed()) == {(topic, 1): 7}
        assert seam.calls == seeded and reconciler.served == 2  # no ListGroups, no OffsetFetch since the seed

        clock.now = 60.0  # intervals.reconcile since the seed: a reconciling poll
        assert offsets(await committed()) == {(topic, 1): 7}
        assert (seam.calls["list_groups"], seam.calls["fetch_offsets"]) == (
            2,
            seeded.get("fetch_offsets", 0) + 1,
        )
        clock.now = 65.0
        for _ in range(200):  # settled once the tail has read up to the end offsets read after the poll
            await committed()
            if reconciler.runs:
                break
            await asyncio.sleep(0.1)
        assert (reconciler.runs, reconciler.differences) == (1, 0)
        assert reconciler.last is not None and reconciler.last.differences == 0
    finally:
        await tail.stop()
        close()
        admin.close()
