"""Incidents that need time to pass, on the session's expiry sandbox (``kafka_expiry``, one node whose
retention checks run every second and whose committed offsets expire after one minute, shared with the
golden expiry test: :mod:`tests.support.expiry`); both scenarios run concurrently, watched by a runtime
scoped to their groups (the tail replays what earlier tests left on that sandbox).

* Retention: a topic keeps 40 s of data (1 s segments) under a steady producer; a member of a group reads
  to ~100, commits and stops processing (paused, still in the group). The runtime first projects the loss
  (``retention_risk``), then sees the log start pass the committed offset (``committed_below_log_start``);
  the member is restarted, its fetch is out of range, ``auto.offset.reset=earliest`` moves it to the log start
  and it commits there (``offset_skip`` over the deleted messages, counted up to the last observed log
  start).
* Expiry: a standalone ``assign()`` consumer commits two partitions and goes away; a minute later the
  coordinator expires them (tombstones) -> ``offsets_lost``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster
from tests.e2e.consumers import group_consumer, join
from tests.e2e.harness import CLUSTER, RuntimeThread, create_topics, e2e_settings, produce, wait_for
from tests.e2e.pipeline_check import pipeline_vs_online

pytestmark = [
    pytest.mark.integration,
    pytest.mark.apart,
]  # mostly waiting: beside the others (tests/parallel.py)
RETENTION_MS = 40_000
# detection.rate_min_span_seconds of the runtime (60 s by default): the log start's rate is judged from
# 20 s of history, so the risk is projected in the ~20 s between retention's first deletion and its passing
# the member's commit (the data of the 20 s the member read before it)
RATE_MIN_SPAN = 20.0


class SteadyProducer(threading.Thread):
    """About 5 messages a second to ``topic[0]`` until :meth:`halt`."""

    def __init__(self, kafka: SandboxCluster, topic: str) -> None:
        super().__init__(daemon=True, name="e2e-steady-producer")
        self.producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers, acks="all")
        self.topic = topic
        self._halt = threading.Event()

    def run(self) -> None:
        n = 0
        while not self._halt.wait(0.2):
            self.producer.send(self.topic, b"m%d" % n, partition=0)
            n += 1
        self.producer.close()

    def halt(self) -> None:
        self._halt.set()
        self.join(30)


@dataclass(eq=False)
class StuckMember(threading.Thread):
    """A group member that reads to ``upto``, commits and pauses (keeps polling: it stays in the group);
    once resumed it restarts and commits where its first batch starts, i.e. where the reset put it."""

    kafka: SandboxCluster
    group: str
    topic: str
    upto: int
    committed: int | None = None
    reset_to: int | None = None
    error: BaseException | None = None
    resume: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        super().__init__(daemon=True, name="e2e-stuck-member")

    def run(self) -> None:
        consumer = group_consumer(self.kafka, self.group, "earliest")
        tp = TopicPartition(self.topic, 0)
        try:
            join(consumer, self.topic)
            while not consumer.assignment() or consumer.position(tp) < self.upto:
                consumer.poll(timeout_ms=200, max_records=10)
            self.committed = consumer.position(tp)
            consumer.commit({tp: OffsetAndMetadata(self.committed, "", -1)})
            consumer.pause(tp)
            while not self.resume.is_set():
                consumer.poll(timeout_ms=200)
            # Restart rather than resume: the paused consumer keeps the records it had fetched past
            # ``upto`` and would return those stale ones first (kafka-python, like the Java client,
            # parks a paused partition's buffered fetch). A fresh member starts from the committed offset.
            consumer.close(autocommit=False)
            consumer = group_consumer(self.kafka, self.group, "earliest")
            join(consumer, self.topic)
            while self.reset_to is None:
                batch = consumer.poll(timeout_ms=200).get(tp, [])
                if batch:
                    self.reset_to = batch[0].offset
                    consumer.commit({tp: OffsetAndMetadata(self.reset_to, "", -1)})
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.done.set()
            consumer.close(autocommit=False)


@dataclass
class TimeBased:
    kafka: SandboxCluster
    runtime: RuntimeThread
    retention_topic: str
    member: StuckMember
    expiry_group: str
    expiry_topic: str
    expired: dict[int, int]


@pytest.fixture(scope="module")
def timed(kafka_expiry: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TimeBased]:
    root: Path = tmp_path_factory.mktemp("e2e-timed")
    kafka = kafka_expiry
    producer: SteadyProducer | None = None
    member: StuckMember | None = None
    runtime: RuntimeThread | None = None
    suffix = uuid.uuid4().hex[:6]
    try:
        settings = e2e_settings(
            kafka,
            root,
            clusters=[{**kafka.cluster_config(CLUSTER), "groups": {"include": [f"e2e-[a-z]+-{suffix}"]}}],
            detection={
                "debounce_seconds": 0.05,
                "snapshot_group_interval_seconds": 0,
                "snapshot_max_per_hour": 1000,
                "recent_commit_seconds": 30,  # a commit older than this is from an idle consumer
                "rate_min_span_seconds": RATE_MIN_SPAN,
            },
        )
        runtime = RuntimeThread(settings)
        runtime.wait_caught_up()
        retention_topic = f"e2e-retention-{suffix}"
        expiry_topic, expiry_group = f"e2e-expiry-{suffix}", f"e2e-standalone-{suffix}"
        create_topics(
            kafka,
            [
                NewTopic(
                    retention_topic,
                    1,
                    1,
                    topic_configs={"segment.ms": "1000", "retention.ms": str(RETENTION_MS)},
                ),
                NewTopic(expiry_topic, 2, 1),
            ],
        )
        producer = SteadyProducer(kafka, retention_topic)
        producer.start()

        expired = {0: 5, 1: 7}
        for p in expired:
            produce(kafka, expiry_topic, 10, partition=p)
        standalone = KafkaConsumer(bootstrap_servers=kafka.bootstrap_servers, group_id=expiry_group)
        try:
            standalone.assign([TopicPartition(expiry_topic, p) for p in expired])
            standalone.commit(
                {TopicPartition(expiry_topic, p): OffsetAndMetadata(o, "", -1) for p, o in expired.items()}
            )
        finally:
            standalone.close(autocommit=False)

        member = StuckMember(kafka, f"e2e-stuck-{suffix}", retention_topic, upto=100)
        member.start()
        wait_for(lambda: member.committed is not None or member.done.is_set(), 90, "member committed")
        assert member.error is None, member.error
        yield TimeBased(kafka, runtime, retention_topic, member, expiry_group, expiry_topic, expired)
    finally:
        if member is not None:
            member.resume.set()
            member.join(30)
        if producer is not None:
            producer.halt()
        if runtime is not None:
            runtime.stop()


def test_standalone_consumer_offsets_expire_offsets_lost(timed: TimeBased) -> None:
    [alert] = timed.runtime.wait_alerts(
        "offsets_lost after expiry", 150, kind="offsets_lost", group=timed.expiry_group
    )
    assert (alert.severity, alert.cause, alert.topic, alert.partition) == ("info", "expired", None, None)
    assert alert.magnitude["offsets_lost"] == 2
    assert sorted(alert.evidence["offsets"]) == [
        f"{timed.expiry_topic}[{p}]={o}" for p, o in timed.expired.items()
    ]
    assert alert.evidence["retention_seconds"] == 60


def test_retention_passes_stopped_member_risk_then_loss_then_skip(timed: TimeBased) -> None:
    group, topic, runtime = timed.member.group, timed.retention_topic, timed.runtime
    committed = timed.member.committed
    assert committed is not None and committed >= 100

    [risk] = runtime.wait_alerts("retention_risk", 150, kind="retention_risk", group=group)
    assert (risk.topic, risk.partition, risk.severity) == (topic, 0, "warning")
    assert risk.evidence["committed"] == committed and risk.evidence["consume_rate_per_s"] == 0
    seconds_to_loss = risk.magnitude["seconds_to_loss"]
    assert seconds_to_loss is not None and 0 < seconds_to_loss < 6 * 3600

    [lost] = runtime.wait_alerts(
        "committed_below_log_start", 90, kind="committed_below_log_start", group=group
    )
    assert (lost.topic, lost.partition, lost.severity, lost.cause) == (topic, 0, "critical", "retention")
    assert lost.evidence["committed"] == committed
    assert lost.magnitude["messages_lost"] == lost.evidence["log_start"] - committed > 0
    # the loss is now certain: the projection resolves
    wait_for(
        lambda: (runtime.alerts.get(risk.id) or risk).status == "resolved", 30, "retention_risk resolved"
    )

    timed.member.resume.set()
    wait_for(timed.member.done.is_set, 60, "member reset and committed")
    assert timed.member.error is None, timed.member.error
    reset_to = timed.member.reset_to
    assert reset_to is not None and reset_to > committed
    [skip] = runtime.wait_alerts("offset_skip", 30, kind="offset_skip", group=group)
    assert (skip.topic, skip.partition, skip.severity, skip.cause) == (
        topic,
        0,
        "critical",
        "auto_reset_earliest",
    )
    # Deleted unread only up to the log start observed before the reset (retention may have moved it on
    # by the reset, unobserved): at least the loss committed_below_log_start reported, at most the jump.
    # After a reset to earliest, only the deleted messages were never read.
    deleted, reported = skip.magnitude["messages_deleted_unread"], lost.magnitude["messages_lost"]
    assert deleted is not None and reported is not None and reported <= deleted <= reset_to - committed
    assert skip.magnitude["messages_skipped"] == deleted
    assert skip.magnitude["messages_read_past"] == reset_to - committed - deleted
    assert (skip.evidence["old_offset"], skip.evidence["new_offset"]) == (committed, reset_to)
    assert skip.evidence["old_offset_was"] == "below_log_start"
    wait_for(lambda: (runtime.alerts.get(skip.id) or skip).snapshot_id, 90, "skip snapshot")


# Last in the module: it stops the module's runtime.
def test_time_based_pipeline_over_archive_equals_online_alerts(
    timed: TimeBased, spark: Any, tmp_path: Path
) -> None:
    groups = [timed.member.group, timed.expiry_group]
    timed.runtime.wait_alerts("offset_skip", 60, kind="offset_skip", group=timed.member.group)

    online, found = pipeline_vs_online(timed.runtime, spark, groups, tmp_path)

    kinds = sorted(kind for kind, *_ in online)
    assert kinds == ["committed_below_log_start", "offset_skip"]  # expiry is group-level: not compared
    assert found == online
