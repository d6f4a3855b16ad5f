"""No false alerts: under steady traffic (a producer and a consumer group), members join and leave, all
three brokers restart one after another, a preferred-leader election runs and the controller-only node
restarts. None of it may raise a warning or critical alert, collector_failure included: brokers are
unreachable for a while during a restart, which ``collector_failure_grace_seconds`` (default 120 s)
absorbs. Conditions present before the disruptions (other tests' topics on the shared sandbox) are the
baseline and not counted.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from collectors.model import OFFSETS_TOPIC
from sandbox.cluster import SandboxCluster
from service.scheduler import CollectorStatus as JobStatus
from store.alert_records import Alert
from tests.e2e.harness import RuntimeThread, create_topics, e2e_settings, short, wait_for
from tests.e2e.workload import Member, Traffic

pytestmark = pytest.mark.integration
PARTITIONS = 3


@pytest.fixture(scope="module")
def quiet_runtime(
    kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RuntimeThread]:
    runtime = RuntimeThread(e2e_settings(kafka3, tmp_path_factory.mktemp("e2e-quiet")))
    try:
        runtime.wait_caught_up()
        yield runtime
    finally:
        runtime.stop()


def _settled(runtime: RuntimeThread, topics: list[str]) -> bool:
    """Every replica of ``topics`` in sync as the runtime sees it, and no collector run partial or failing."""
    meta = runtime.metadata()
    if meta is None or any(s.partial_failures or s.last_failure_at for s in _recent(runtime)):
        return False
    for name in topics:
        info = meta.topic(name)
        if info is None or any(p.leader is None or len(p.isr) < len(p.replicas) for p in info.partitions):
            return False
    return True


def _recent(runtime: RuntimeThread) -> list[JobStatus]:
    """Statuses of the collectors whose last run was a failure or partial (else empty)."""
    return [
        s
        for s in runtime.runtime.scheduler.statuses()
        if s.partial_failures or (s.last_failure_at and (s.last_success_at or 0) < s.last_failure_at)
    ]


def _restart_controller(kafka: SandboxCluster) -> None:
    kafka.restart_controller()


def test_rebalances_rolling_restart_preferred_election_controller_restart_no_alert(
    quiet_runtime: RuntimeThread, kafka3: SandboxCluster
) -> None:
    runtime = quiet_runtime
    suffix = uuid.uuid4().hex[:6]
    topic, group = f"e2e-steady-{suffix}", f"e2e-steady-{suffix}"
    create_topics(kafka3, [NewTopic(topic, PARTITIONS, 3, topic_configs={"min.insync.replicas": "2"})])
    watched = [topic, OFFSETS_TOPIC]
    traffic = Traffic(kafka3, topic)
    members = [Member(kafka3, group, topic) for _ in range(2)]
    traffic.start()
    for m in members:
        m.start()
    try:
        wait_for(lambda: all(m.read for m in members), 60, "both members reading")
        wait_for(lambda: _settled(runtime, watched), 60, "settled before", lambda: str(_recent(runtime)))
        time.sleep(3)  # a few evaluations of the steady state
        baseline = {a.id for a in runtime.list_alerts()}
        before = {(a.kind, a.severity) for a in runtime.list_alerts() if a.severity != "info"}

        # members join and leave: three rebalances
        joiner = Member(kafka3, group, topic)
        joiner.start()
        members.append(joiner)
        wait_for(lambda: joiner.read > 0, 60, "joiner reading")
        members.pop(0).leave()
        read = sum(m.read for m in members)
        wait_for(lambda: sum(m.read for m in members) > read + 50, 60, "group reads on")

        for broker_id in sorted(kafka3.brokers):  # rolling restart, waiting for full ISR each time
            kafka3.stop_broker(broker_id)
            kafka3.start_broker(broker_id)
            wait_for(lambda: _settled(runtime, watched), 120, f"settled after broker {broker_id}")

        admin = KafkaAdminClient(bootstrap_servers=kafka3.bootstrap_servers)
        try:
            admin.elect_leaders(0, {topic: list(range(PARTITIONS))}, raise_errors=False)
        finally:
            admin.close()
        _restart_controller(kafka3)
        wait_for(lambda: _settled(runtime, watched), 120, "settled after the controller restart")

        read = sum(m.read for m in members)
        wait_for(lambda: sum(m.read for m in members) > read + 50, 60, "group reads after everything")
        time.sleep(5)  # detection evaluates the last observations
    finally:
        for m in members:
            m.leave()
        traffic.halt()
        for broker_id, node in kafka3.brokers.items():
            if not node.alive():
                kafka3.start_broker(broker_id)

    assert all(m.error is None for m in members), [m.error for m in members]
    assert traffic.sent > 500
    alarms = runtime.new_pages(baseline)
    accounts = "\n".join(_account(a, runtime) for a in alarms)
    assert alarms == [], f"false alerts: {[short(a) for a in alarms]} (present before: {before})\n{accounts}"


def _account(alert: Alert, runtime: RuntimeThread) -> str:
    """A false page and every stored alert of its key, oldest first: when each started, resolved and why."""
    same = [a for a in runtime.list_alerts() if a.fingerprint == alert.fingerprint]
    lines = [
        f"  {a.id} {a.status} {a.severity} started {a.started_at:.1f} updated {a.updated_at:.1f} resolved "
        f"{a.resolved_at} ({a.resolved_reason}): {a.summary} {json.dumps(dict(a.evidence), default=str)}"
        for a in sorted(same, key=lambda a: a.started_at)
    ]
    return "\n".join([short(alert), *lines])
