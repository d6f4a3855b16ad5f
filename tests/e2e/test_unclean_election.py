"""Unclean leader election, replayed for real (KAFKA_NOTES recipe) on two dedicated topics at once.

Each topic has replicas [1, 2] (leader 1), min.insync.replicas=1. 100 messages; broker 2 stops; 50 more;
each topic's group reads and commits 150; broker 1 stops, broker 2 starts and is elected uncleanly with
log end 100; broker 1 comes back and truncates. The runtime must report the election, the truncation (50)
and the committed offsets 50 past the log end. Then each group's consumer returns, gets OFFSET_OUT_OF_RANGE
at 150 and resets:

* ``earliest`` to the log start 0: an ``offset_rewind`` (``auto_reset_earliest``: no reset to latest lands
  below the truncated log end) of 100 re-read, not 150: offsets 100..150 held messages the truncation
  destroyed, and the new ones written there were never read before;
* ``latest`` to the log end 100, committed at once: a move back of 50 offsets that will be filled by new
  messages. A reset to the log start that read the 100 kept messages before committing would commit 100
  too, so the commits cannot tell which it was: an ``offset_skip`` (``auto_reset_direction_unknown``,
  warning) with nothing certain (``messages_skipped`` 0), at most 0 skipped (nothing was written since the
  truncation) or at most 100 re-read; not a rewind.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from sandbox.cluster import SandboxCluster
from store.alert_records import Alert
from tests.e2e.consumers import commit_reset_position, consume_and_commit
from tests.e2e.harness import RuntimeThread, create_topics, produce, retrying, wait_for
from tests.e2e.pipeline_check import pipeline_vs_online

pytestmark = pytest.mark.integration
A, B = 1, 2  # the first leader, and the follower left behind


@dataclass(frozen=True)
class Incident:
    topics: dict[str, str]  # variant -> topic
    groups: dict[str, str]  # variant -> group
    committed: dict[str, list[int]]  # variant -> offsets its consumer committed after the truncation


@pytest.fixture(scope="module")
def incident(runtime3: RuntimeThread, kafka3: SandboxCluster) -> Any:
    suffix = uuid.uuid4().hex[:6]
    topics = {v: f"e2e-unclean-{v}-{suffix}" for v in ("earliest", "latest")}
    groups = {v: f"e2e-unclean-{v}-{suffix}" for v in topics}
    create_topics(
        kafka3,
        (
            NewTopic(t, replica_assignments={0: [A, B]}, topic_configs={"min.insync.replicas": "1"})
            for t in topics.values()
        ),
    )
    try:
        for t in topics.values():
            produce(kafka3, t, 100)
        _seen(runtime3, topics, leader=A, isr=(A, B), log_end=100)
        kafka3.stop_broker(B)  # controlled shutdown: ISR shrinks to [A]
        _seen(runtime3, topics, isr=(A,))
        for t in topics.values():
            produce(kafka3, t, 50, acks=1)
        for v, t in topics.items():
            consume_and_commit(kafka3, groups[v], t, 150)
        _seen(runtime3, topics, log_end=150)
        wait_for(
            lambda: all(runtime3.sees_commit(groups[v], t, 0, 150) for v, t in topics.items()), 30, "150"
        )

        kafka3.stop_broker(A)  # the last in-sync replica: both partitions offline
        kafka3.start_broker(B)  # out of sync, not eligible for a clean election
        _elect_unclean(kafka3, list(topics.values()))
        _seen(runtime3, topics, leader=B, log_end=100)
        kafka3.start_broker(A)  # rejoins as a follower and truncates its log to 100
        for v, t in topics.items():
            runtime3.wait_alerts(f"beyond {v}", 60, kind="committed_beyond_log_end", topic=t)
    finally:
        for broker_id in (A, B):
            if not kafka3.brokers[broker_id].alive():
                kafka3.start_broker(broker_id)

    committed = {v: commit_reset_position(kafka3, groups[v], t, v, 100) for v, t in topics.items()}
    return Incident(topics, groups, committed)


def _seen(runtime: RuntimeThread, topics: dict[str, str], timeout: float = 90, **want: Any) -> None:
    for t in topics.values():
        wait_for(partial(runtime.sees_partition, t, 0, **want), timeout, f"runtime sees {t} {want}")


def _elect_unclean(kafka: SandboxCluster, topics: list[str]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    try:
        retrying(lambda: admin.elect_leaders(1, {t: [0] for t in topics}), 60)
    finally:
        admin.close()


def _one(runtime: RuntimeThread, kind: str, topic: str, timeout: float = 60, **filters: Any) -> Alert:
    [alert] = runtime.wait_alerts(f"{kind} on {topic}", timeout, kind=kind, topic=topic, **filters)
    return alert


@pytest.mark.parametrize("variant", ["earliest", "latest"])
def test_unclean_election_partition_leader_outside_isr_critical(
    runtime3: RuntimeThread, incident: Incident, variant: str
) -> None:
    alert = _one(runtime3, "unclean_leader_election", incident.topics[variant])
    assert (alert.partition, alert.severity, alert.group) == (0, "critical", None)
    assert (alert.evidence["old_leader"], alert.evidence["new_leader"]) == (A, B)
    assert alert.evidence["log_end_went_back"] is True
    assert incident.groups[variant] in alert.evidence["groups"]


def test_unclean_election_controller_counter_cluster_alert(
    runtime3: RuntimeThread, incident: Incident
) -> None:
    [alert] = runtime3.wait_alerts(
        "cluster-wide unclean election", 30, kind="unclean_leader_election", where=lambda a: a.topic is None
    )
    assert (alert.severity, alert.cause) == ("critical", "controller_counter")
    assert alert.magnitude_total["elections"] == 2


@pytest.mark.parametrize("variant", ["earliest", "latest"])
def test_unclean_election_log_truncation_50_messages(
    runtime3: RuntimeThread, incident: Incident, variant: str
) -> None:
    alert = _one(runtime3, "log_truncation", incident.topics[variant])
    assert (alert.partition, alert.severity, alert.cause) == (0, "critical", "unclean_leader_election")
    assert alert.magnitude["messages_truncated"] == 50
    assert (alert.evidence["old_log_end"], alert.evidence["new_log_end"]) == (150, 100)
    assert alert.evidence["groups_beyond_log_end"] == [incident.groups[variant]]


@pytest.mark.parametrize("variant", ["earliest", "latest"])
def test_unclean_election_committed_beyond_log_end_by_50_snapshotted(
    runtime3: RuntimeThread, incident: Incident, variant: str
) -> None:
    topic, group = incident.topics[variant], incident.groups[variant]
    alert = _one(runtime3, "committed_beyond_log_end", topic, group=group)
    assert (alert.partition, alert.severity, alert.magnitude["beyond"]) == (0, "critical", 50)
    assert (alert.evidence["committed"], alert.evidence["log_end"]) == (150, 100)
    wait_for(lambda: (runtime3.alerts.get(alert.id) or alert).snapshot_id, 90, "snapshot on the alert")
    # the consumer reset below the log end: the condition clears
    wait_for(lambda: (runtime3.alerts.get(alert.id) or alert).status == "resolved", 60, "beyond resolved")


def test_unclean_election_earliest_reset_rewind_100_kept_replayed(
    runtime3: RuntimeThread, incident: Incident
) -> None:
    topic, group = incident.topics["earliest"], incident.groups["earliest"]
    assert incident.committed["earliest"][:1] == [0]  # the reset went to the log start
    alert = _one(runtime3, "offset_rewind", topic, group=group)
    assert (alert.partition, alert.severity, alert.cause) == (0, "critical", "auto_reset_earliest")
    # the 100 the truncation kept, not 150: offsets 100..150 now hold messages never read before
    assert alert.magnitude["messages_replayed"] == 100
    assert (alert.evidence["old_offset"], alert.evidence["new_offset"]) == (150, 0)
    assert alert.evidence["log_end_after_truncation"] == 100
    assert alert.occurrences == 1
    snapped = wait_for(lambda: (runtime3.alerts.get(alert.id) or alert).snapshot_id, 90, "rewind snapshot")
    assert runtime3.runtime.store is not None and runtime3.runtime.store.snapshot(snapped) is not None
    assert runtime3.list_alerts(kind="offset_skip", topic=topic) == []


def test_unclean_election_latest_reset_to_log_end_direction_unknown_skip_not_rewind(
    runtime3: RuntimeThread, incident: Incident
) -> None:
    topic, group = incident.topics["latest"], incident.groups["latest"]
    assert incident.committed["latest"] == [100]  # straight to the truncated log end
    alert = _one(runtime3, "offset_skip", topic, group=group)
    # a reset to the log start that read the 100 kept messages would have committed 100 as well
    assert (alert.partition, alert.severity, alert.cause) == (0, "warning", "auto_reset_direction_unknown")
    assert alert.magnitude["messages_skipped"] == 0  # nothing certain
    assert alert.magnitude["messages_skipped_max"] == 0  # nothing produced between truncation and reset
    assert alert.magnitude["messages_replayed_max"] == 100  # the kept messages, had it reset to earliest
    assert (alert.evidence["old_offset"], alert.evidence["new_offset"]) == (150, 100)
    assert alert.evidence["log_end_after_truncation"] == 100
    assert alert.evidence["note"] == "committed offset was beyond the log end"
    assert runtime3.list_alerts(kind="offset_rewind", topic=topic, group=group) == []


# Last in the module: it stops the module's runtime.
def test_unclean_election_pipeline_over_archive_equals_online_alerts(
    runtime3: RuntimeThread, incident: Incident, spark: Any, tmp_path: Path
) -> None:
    for variant, topic in incident.topics.items():  # every alert the tests above waited for is stored
        want = "offset_rewind" if variant == "earliest" else "offset_skip"
        _one(runtime3, want, topic, group=incident.groups[variant])

    online, found = pipeline_vs_online(runtime3, spark, incident.groups.values(), tmp_path)

    g = incident.groups
    kinds = {(kind, group) for kind, group, *_ in online}
    assert kinds >= {("offset_rewind", g["earliest"]), ("offset_skip", g["latest"])}
    assert found == online
