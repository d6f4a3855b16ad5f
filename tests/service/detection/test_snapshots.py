from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.errors import KafkaUnavailableError
from service.detection.snapshots import (
    RETRY_SECONDS,
    SnapshotRateLimit,
    SnapshotTrigger,
    snapshot_groups,
    wants_snapshot,
)
from store.alert_records import Alert
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.service.detection.builders import C, lag, rewind
from tests.store.test_store_alerts import _cycle


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def test_rate_limit_same_group_within_interval_refused_then_allowed() -> None:
    limit = SnapshotRateLimit(group_interval_seconds=60, max_per_hour=10)
    assert limit.allow(C, "g", 0.0) is None
    assert limit.allow(C, "g", 59.0) is not None
    assert limit.allow(C, "h", 59.0) is None
    assert limit.allow(C, "g", 60.0) is None


def test_rate_limit_global_budget_per_hour() -> None:
    limit = SnapshotRateLimit(group_interval_seconds=0, max_per_hour=2)
    assert [limit.allow(C, g, 1.0) is None for g in "abc"] == [True, True, False]
    assert limit.allow(C, "d", 3601.0) is None


def test_wants_snapshot_critical_offset_kinds_only(alerts: AlertStore) -> None:
    [critical] = _cycle(alerts, [rewind()], 1.0)
    [info] = _cycle(alerts, [rewind(partition=1, severity="info")], 1.0)
    [warning] = _cycle(alerts, [lag()], 1.0)
    assert [wants_snapshot(a) for a in (critical, info, warning)] == [True, False, False]


def test_snapshot_groups_truncation_takes_groups_beyond_log_end() -> None:
    a = Alert(
        "x",
        "log_truncation",
        "critical",
        "firing",
        C,
        None,
        "t",
        0,
        1.0,
        1.0,
        "",
        None,
        {},
        {},
        {"groups_beyond_log_end": ["g1", "g2"]},
        "",
        1,
    )
    assert snapshot_groups(a) == ("g1", "g2")


async def test_snapshot_trigger_rate_limited_second_alert_noted_not_dumped(alerts: AlertStore) -> None:
    calls: list[tuple[str, str]] = []

    def dump(group: str, trigger: str) -> str:
        calls.append((group, trigger))
        return f"snap-{len(calls)}"

    trigger = SnapshotTrigger(dump, alerts, SnapshotRateLimit(600, 10), clock=lambda: 100.0)
    [first] = _cycle(alerts, [rewind(partition=0)], 1.0)
    [second] = _cycle(alerts, [rewind(partition=1)], 1.0)
    trigger.request([first, second])
    await trigger.drain()
    assert calls == [("g", first.id)]
    assert [alerts.get(a.id).snapshot_id for a in (first, second)] == ["snap-1", None]  # type: ignore[union-attr]
    assert "snapshot_skipped" in [t.transition for t in alerts.transitions(second.id)]


async def test_snapshot_trigger_dump_fails_noted_on_alert(alerts: AlertStore) -> None:
    def dump(group: str, trigger: str) -> str:
        raise KafkaUnavailableError("down")

    trigger = SnapshotTrigger(dump, alerts, SnapshotRateLimit(0, 10))
    [a] = _cycle(alerts, [rewind()], 1.0)
    trigger.request([a])
    await trigger.drain()
    assert alerts.get(a.id).snapshot_id is None  # type: ignore[union-attr]
    assert [t.transition for t in alerts.transitions(a.id)][-1] == "snapshot_failed"


async def test_snapshot_trigger_repeating_alert_one_dump_not_one_per_cycle(alerts: AlertStore) -> None:
    calls: list[str] = []

    def dump(group: str, trigger: str) -> str:
        calls.append(trigger)
        return f"snap-{len(calls)}"

    limit = SnapshotRateLimit(0, 10)
    trigger = SnapshotTrigger(dump, alerts, limit, clock=lambda: 100.0)
    [a] = _cycle(alerts, [rewind()], 1.0)
    for _ in range(5):  # the alert repeats every cycle, its record not yet showing the snapshot
        trigger.request([a])
        await trigger.drain()
    assert calls == [a.id]
    assert limit.allow(C, "other", 100.0) is None  # the budget was spent once, not five times


async def test_snapshot_trigger_failed_dump_retried_after_the_retry_interval(alerts: AlertStore) -> None:
    now = [100.0]
    outcomes: list[str] = []

    def dump(group: str, trigger: str) -> str:
        if not outcomes:
            outcomes.append("failed")
            raise KafkaUnavailableError("down")
        outcomes.append("taken")
        return "snap-1"

    trigger = SnapshotTrigger(dump, alerts, SnapshotRateLimit(0, 10), clock=lambda: now[0])
    [a] = _cycle(alerts, [rewind()], 1.0)
    trigger.request([a])
    await trigger.drain()
    now[0] += RETRY_SECONDS - 1
    trigger.request([a])
    await trigger.drain()
    assert outcomes == ["failed"]
    now[0] += 1
    trigger.request([a])
    await trigger.drain()
    assert outcomes == ["failed", "taken"]
    assert alerts.get(a.id).snapshot_id == "snap-1"  # type: ignore[union-attr]
