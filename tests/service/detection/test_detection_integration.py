"""Detection end to end on the real 1-node sandbox: a rewinding commit becomes one stored, snapshotted
``offset_rewind`` alert, and a restart neither loses nor duplicates it."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from sandbox.cluster import SandboxCluster
from service.runtime import Runtime, build_runtime
from service.settings import Settings, load_settings
from store.alert_records import Alert
from store.alerts import AlertStore
from tests.collectors.tail.sandbox_it import commit, ensure_topic

pytestmark = pytest.mark.integration
log = logging.getLogger(__name__)

TOPIC = "detect-it-orders"


HELD_SECONDS = 60.0  # the first runtime's minimum evaluation interval: only an urgent evaluation is sooner


def _settings(kafka: SandboxCluster, tmp: Path, min_interval: float | None = None) -> Settings:
    detection: dict[str, float] = {
        "debounce_seconds": 0.1,
        "state_save_seconds": 1,
        "snapshot_max_per_hour": 1000,
    }
    if min_interval is not None:
        detection["min_evaluation_interval_seconds"] = min_interval
    return load_settings(
        clusters=[kafka.cluster_settings("sandbox").model_dump()],
        intervals={
            "metadata": 1,
            "offsets": 1,
            "groups": 1,
            "committed": 0.5,
            "configs": 30,
            "broker_metrics": 5,
        },
        store={"path": str(tmp / "og.db")},
        snapshots={"directory": str(tmp / "snapshots")},
        tail={"start_from": "earliest", "checkpoint_seconds": 0.2},
        detection=detection,
    )


def _rewind_alerts(settings: Settings, group: str) -> tuple[Alert, ...]:
    with AlertStore.open(settings.store) as alerts:
        return alerts.list(group=group, kind="offset_rewind", limit=100).alerts


async def _until(check, timeout: float, step: float = 0.01):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        found = await asyncio.to_thread(check)
        if found:
            return found
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(step)


async def _started(settings: Settings) -> Runtime:
    runtime = build_runtime(settings)
    await runtime.start()
    await _until(lambda: all(t.caught_up for t in runtime.tails), 60, 0.1)
    return runtime


async def test_detection_runtime_rewinding_commit_one_snapshotted_alert_across_restart(
    kafka1: SandboxCluster, tmp_path: Path
) -> None:
    group = f"detect-it-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    try:
        ensure_topic(admin, TOPIC, 1)
        producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
        for i in range(60):
            producer.send(TOPIC, value=f"m{i}".encode(), partition=0)
        producer.flush()
        producer.close()
        settings = _settings(kafka1, tmp_path)

        # 50 is still queued (held by the interval) when 20 arrives: a rewind below a commit not yet
        # evaluated is urgent all the same
        runtime = await _started(_settings(kafka1, tmp_path, HELD_SECONDS))
        try:
            await asyncio.to_thread(commit, admin, group, {(TOPIC, 0): 50})
            await asyncio.sleep(2.0)  # tail and polls both see 50 first
            await asyncio.to_thread(commit, admin, group, {(TOPIC, 0): 20})
            acked = time.time()
            [alert] = await _until(lambda: _rewind_alerts(settings, group), HELD_SECONDS / 2)
            seen = time.time()
            log.warning(
                "commit ack -> alert stored: %.3f s (started_at), seen by polling after %.3f s",
                alert.started_at - acked,
                seen - acked,
            )
            assert (alert.topic, alert.partition, alert.severity) == (TOPIC, 0, "critical")
            assert alert.magnitude["messages_replayed"] == 30
            assert (alert.evidence["old_offset"], alert.evidence["new_offset"]) == (50, 20)
            [snapped] = await _until(
                lambda: [a for a in _rewind_alerts(settings, group) if a.snapshot_id], 60, 0.2
            )
        finally:
            await runtime.stop()

        runtime = await _started(settings)
        try:
            await asyncio.sleep(3.0)  # several polls and evaluations after the restart
            assert runtime.store is not None
            info = await asyncio.to_thread(runtime.store.snapshot, snapped.snapshot_id or "")
        finally:
            await runtime.stop()
        assert info is not None and (info.group, info.trigger) == (group, snapped.id)
        after = _rewind_alerts(settings, group)
        assert [(a.id, a.status, a.occurrences) for a in after] == [(snapped.id, "firing", 1)]
    finally:
        admin.close()
