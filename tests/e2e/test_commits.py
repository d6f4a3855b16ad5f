"""Commit-level incidents seen by the tail alone: the committed-offset and offsets polls run every 30 s,
so a rewind undone before the next poll exists only in ``__consumer_offsets``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import TopicPartition
from kafka.admin import NewTopic

from sandbox.cluster import SandboxCluster
from tests.e2e.consumers import consume_and_commit, group_consumer, join
from tests.e2e.harness import RuntimeThread, create_topics, e2e_settings, produce, wait_for
from tests.e2e.pipeline_check import pipeline_vs_online

pytestmark = pytest.mark.integration
SAFE = {"min.insync.replicas": "2"}  # replicated 3 times: no config_risk of its own


@pytest.fixture(scope="module")
def tail_runtime(kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuntimeThread]:
    intervals = {
        "metadata": 5,
        "offsets": 30,
        "groups": 30,
        "committed": 30,
        "configs": 2,
        "broker_metrics": 30,
    }
    settings = e2e_settings(kafka3, tmp_path_factory.mktemp("e2e-commits"), intervals=intervals)
    runtime = RuntimeThread(settings)
    try:
        runtime.wait_caught_up()
        yield runtime
    finally:
        runtime.stop()


GROUPS: list[str] = []  # every group the scenarios of this module commit for


def _names(prefix: str) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:6]
    GROUPS.append(f"e2e-{prefix}-{suffix}")
    return f"e2e-{prefix}-{suffix}", f"e2e-{prefix}-{suffix}"


def test_stable_group_seeks_back_and_reads_on_before_any_poll_critical_rewind(
    tail_runtime: RuntimeThread, kafka3: SandboxCluster
) -> None:
    topic, group = _names("seekback")
    create_topics(kafka3, [NewTopic(topic, 1, 3, topic_configs=SAFE)])
    produce(kafka3, topic, 200)
    consumer = group_consumer(kafka3, group)
    tp = TopicPartition(topic, 0)
    try:
        join(consumer, topic)
        wait_for(lambda: consumer.poll(timeout_ms=100) is not None and consumer.assignment(), 60, "assigned")
        consumer.seek(tp, 100)
        consumer.commit()
        wait_for(lambda: tail_runtime.sees_commit(group, topic, 0, 100), 30, "tail saw 100")
        started = time.monotonic()
        consumer.seek(tp, 20)  # the application rewinds deliberately and commits it
        consumer.commit()
        while consumer.position(tp) < 150:  # and reads on past the old offset at once
            consumer.poll(timeout_ms=100)
        consumer.commit()
        quick = time.monotonic() - started
    finally:
        consumer.close(autocommit=False)
    assert quick < 25, f"the rewind stayed visible {quick:.1f} s: a 30 s poll might have seen it"

    [alert] = tail_runtime.wait_alerts("tail-only rewind", 30, kind="offset_rewind", group=group)
    assert (alert.topic, alert.partition, alert.severity) == (topic, 0, "critical")
    assert alert.magnitude["messages_replayed"] == 80
    assert (alert.evidence["old_offset"], alert.evidence["new_offset"], alert.evidence["source"]) == (
        100,
        20,
        "tail",
    )
    assert alert.evidence["group_state"] == "Stable"
    assert alert.occurrences == 1


def test_admin_reset_to_earliest_on_empty_group_info_rewind(
    tail_runtime: RuntimeThread, kafka3: SandboxCluster
) -> None:
    topic, group = _names("adminreset")
    create_topics(kafka3, [NewTopic(topic, 1, 3, topic_configs=SAFE)])
    produce(kafka3, topic, 150)
    consume_and_commit(kafka3, group, topic, 150)  # then leaves: the group is Empty
    wait_for(lambda: tail_runtime.sees_commit(group, topic, 0, 150), 30, "tail saw 150")
    _reset(kafka3, group, topic, "--to-earliest")

    [alert] = tail_runtime.wait_alerts("admin reset rewind", 30, kind="offset_rewind", group=group)
    assert (alert.topic, alert.partition, alert.severity, alert.cause) == (topic, 0, "info", "admin_reset")
    assert alert.magnitude["messages_replayed"] == 150
    assert (alert.evidence["old_offset"], alert.evidence["new_offset"]) == (150, 0)
    assert alert.snapshot_id is None  # not critical: no snapshot


def test_admin_reset_to_latest_on_empty_group_info_skip(
    tail_runtime: RuntimeThread, kafka3: SandboxCluster
) -> None:
    # a stopped group (it had members) moved forward by an operator from a fetchable offset: once not
    # reported at all; a consumer's own progress never is (it commits with members)
    topic, group = _names("adminlatest")
    create_topics(kafka3, [NewTopic(topic, 1, 3, topic_configs=SAFE)])
    produce(kafka3, topic, 150)
    consume_and_commit(kafka3, group, topic, 150)  # then leaves: the group is Empty
    wait_for(lambda: tail_runtime.sees_commit(group, topic, 0, 150), 30, "tail saw 150")
    produce(kafka3, topic, 50)  # nobody reads them
    # the log end sampled before the reset: the count is exact, not a bound (an offsets poll now, not at
    # the next of this module's 30 s polls)
    wait_for(
        lambda: tail_runtime.observe("offsets") and tail_runtime.sees_partition(topic, 0, log_end=200),
        90,
        "runtime sees log end 200",
    )
    _reset(kafka3, group, topic, "--to-latest")

    [alert] = tail_runtime.wait_alerts("admin reset skip", 30, kind="offset_skip", group=group)
    assert (alert.topic, alert.partition, alert.severity, alert.cause) == (topic, 0, "info", "admin_reset")
    assert alert.magnitude == {"messages_skipped": 50, "messages_deleted_unread": 0, "messages_read_past": 0}
    assert (alert.evidence["old_offset"], alert.evidence["new_offset"]) == (150, 200)
    assert alert.evidence["old_offset_was"] == "fetchable"
    assert alert.snapshot_id is None  # not critical: no snapshot


def test_unclean_enabled_single_replica_topic_config_risk(
    tail_runtime: RuntimeThread, kafka3: SandboxCluster
) -> None:
    topic, group = _names("risky")
    configs = {"unclean.leader.election.enable": "true", "min.insync.replicas": "1"}
    create_topics(kafka3, [NewTopic(topic, 1, 1, topic_configs=configs)])
    produce(kafka3, topic, 10)
    consume_and_commit(kafka3, group, topic, 10)  # config_risk is about topics some group consumes

    [alert] = tail_runtime.wait_alerts("config risk", 30, kind="config_risk", topic=topic)
    assert (alert.severity, alert.partition, alert.group) == ("warning", None, None)
    assert set(alert.evidence["settings"]) == {
        "unclean.leader.election.enable=true",
        "replication.factor=1",
        "min.insync.replicas=1",
    }
    assert alert.evidence["groups"] == [group]
    assert alert.magnitude["risks"] == 3


# Last in the module: it stops the module's runtime.
def test_commit_incidents_pipeline_over_archive_equals_online_alerts(
    tail_runtime: RuntimeThread, spark: Any, tmp_path: Path
) -> None:
    online, found = pipeline_vs_online(tail_runtime, spark, GROUPS, tmp_path)

    # seek-back, admin reset to earliest (rewind), admin reset to latest (skip)
    assert sorted(kind for kind, *_ in online) == ["offset_rewind", "offset_rewind", "offset_skip"]
    assert found == online


def _reset(kafka: SandboxCluster, group: str, topic: str, mode: str) -> None:
    """``kafka-consumer-groups --reset-offsets <mode> --execute``, as an operator runs it."""
    done = kafka.run_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server",
        kafka.bootstrap_servers,
        "--group",
        group,
        "--topic",
        topic,
        "--reset-offsets",
        mode,
        "--execute",
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
