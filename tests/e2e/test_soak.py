"""The suite's version of ``bench/soak`` (issue 13): every operation of the schedule once but the slow
ones other e2e modules cover (a broker rolling restart: ``test_no_false_alerts``; the whole-cluster
outage: ``test_outage``), on a fresh sandbox with its own broker settings, watched by a separate
``offsetguard serve``; then the injected incidents. No false page, every incident caught, members over
the four clients, and every finding within what they really read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.soak.operations import SCHEDULE, Timing
from bench.soak.run import Plan, soak

pytestmark = pytest.mark.integration
COVERED_ELSEWHERE = {"rolling_restart_brokers", "outage"}


@pytest.mark.timeout(600)
def test_soak_operations_no_false_page_then_every_incident_caught(tmp_path: Path) -> None:
    plan = Plan(
        minutes=0,  # one pass of the schedule
        groups=12,
        topics=4,
        gap=1,  # each operation waits for what it needs itself (a rebalance, the monitor seeing a commit)
        # from the service's readiness (the members start meanwhile). The run's alerts are judged at its
        # end, a minute or more after the last operation: a late false page still counts
        warmup=15,
        quiet=5,
        incident_timeout=150,
        # settle: a restarted Python member is back in its group (its first assignment awaited) before
        # the next one goes, so 2 s between them is enough. The quorum down 10 s: longer than the
        # brokers' 6 s session timeout, as the bench's 60 s is
        timing=Timing(settle=2, outage=0, quorum_loss=10),
        retention_ms=60_000,  # deletes consumed data within the run (no outage here to outlast)
        # the retention incident: 15 s (5 s segments, checked every 5 s) passes the stuck group within
        # about 25 s of the cut, while the other incidents are injected (30 s took 37-44 s)
        incident_retention_ms=15_000,
        schedule=tuple(op.__name__ for op in SCHEDULE if op.__name__ not in COVERED_ELSEWHERE),
    )
    result = soak(plan, tmp_path)
    assert result["operation_errors"] == []
    assert set(result["operations"]) == set(plan.schedule)
    assert result["false_pages"] == [], json.dumps(result["false_pages"], indent=1)
    assert result["incidents_caught"] == result["incidents_injected"] == 4, json.dumps(
        result["incidents"], indent=1
    )
    truth = result["truth"]
    assert set(truth["reads_by_client"]) == {
        "kafka-python",
        "aiokafka",
        "librdkafka",
        "java-classic",
        "java-consumer",
    }, truth
    assert truth["records_read"] > 0 and truth["group_partitions"] >= 12 * 3, truth
    assert result["truth_problems"] == [], json.dumps(result["truth_problems"], indent=1)
