"""Retention of resolved alerts (store.alert_retention via AlertStore.prune) and its setting."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from store import alert_retention
from store.alert_records import DRILL_PREFIX, FIRING, RESOLVED, Alert, AlertWrite
from store.alert_retention import PrunedAlerts
from store.alerts import AlertStore
from store.db import connect_to
from store.settings import StoreSettings

C = "c1"
DAY = 86400.0
NOW = 400 * DAY


@pytest.fixture
def alerts(settings: StoreSettings) -> Iterator[AlertStore]:
    with AlertStore.open(settings) as opened:
        yield opened


def _alert(name: str, *, started: float, group: str = "g", replayed: int = 0) -> Alert:
    return Alert(
        id=name,
        kind="offset_rewind",
        severity="critical",
        status=FIRING,
        cluster=C,
        group=f"{group}-{name}",
        topic="t",
        partition=0,
        started_at=started,
        updated_at=started,
        summary=name,
        cause=None,
        magnitude={"messages_replayed": replayed},
        magnitude_total={"messages_replayed": replayed},
        evidence={},
        occurrence=name,
        occurrences=2,
    )


def _write(alerts: AlertStore, writes: Sequence[AlertWrite], at: float) -> tuple[Alert, ...]:
    return alerts.update_firing(C, lambda firing, resolved: list(writes), at)


def _fire(alerts: AlertStore, name: str, started: float, **kw: Any) -> Alert:
    [a] = _write(alerts, [AlertWrite(_alert(name, started=started, **kw), True, "fired")], started)
    return a


def _resolve(alerts: AlertStore, a: Alert, at: float) -> Alert:
    done = replace(a, status=RESOLVED, resolved_at=at, resolved_reason="acknowledged", updated_at=at)
    [r] = _write(alerts, [AlertWrite(done, False, "resolved")], at)
    return r


def _rows(settings: StoreSettings, sql: str) -> list[Any]:
    with contextlib.closing(connect_to(settings)) as conn:
        return [r[0] for r in conn.execute(sql)]


def _notify(settings: StoreSettings, alert_id: str, state: str) -> None:
    with contextlib.closing(connect_to(settings)) as conn:
        conn.execute(
            "INSERT INTO notifications (receiver, alert_id, event, payload, state, created_at)"
            " VALUES ('hook', ?, 'resolved', '{}', ?, 0)",
            (alert_id, state),
        )


def test_prune_deletes_alerts_resolved_before_cutoff_with_their_transitions(
    alerts: AlertStore, settings: StoreSettings
) -> None:
    old = _resolve(alerts, _fire(alerts, "old", 10 * DAY), 11 * DAY)
    recent = _resolve(alerts, _fire(alerts, "recent", 10 * DAY), 350 * DAY)
    firing = _fire(alerts, "firing", 5 * DAY)  # fired long before the cutoff, still firing
    pruned = alerts.prune(NOW - 90 * DAY)
    assert pruned == PrunedAlerts(alerts=1, transitions=2, notifications=0)
    assert alerts.get(old.id) is None and alerts.transitions(old.id) == ()
    assert [a.id for a in alerts.list().alerts] == [firing.id, recent.id]
    assert [t.transition for t in alerts.transitions(recent.id)] == ["fired", "resolved"]
    kept = _rows(settings, "SELECT DISTINCT alert_id FROM alert_transitions ORDER BY 1")
    assert kept == ["firing", "recent"]


def test_prune_resolved_exactly_at_cutoff_kept(alerts: AlertStore) -> None:
    a = _resolve(alerts, _fire(alerts, "edge", DAY), 2 * DAY)
    assert alerts.prune(2 * DAY) == PrunedAlerts()
    assert alerts.get(a.id) is not None


def test_prune_in_chunks_deletes_every_old_alert(alerts: AlertStore, settings: StoreSettings) -> None:
    for i in range(7):
        _resolve(alerts, _fire(alerts, f"a{i}", DAY + i), 2 * DAY + i)
    with contextlib.closing(connect_to(settings)) as conn:
        assert alert_retention.prune_chunk(conn, C, NOW, limit=3).alerts == 3  # one chunk, no more
    assert alerts.prune(NOW, chunk=3) == PrunedAlerts(alerts=4, transitions=8)
    assert alerts.list().alerts == ()


def test_prune_alert_with_pending_notification_kept(alerts: AlertStore, settings: StoreSettings) -> None:
    waiting = _resolve(alerts, _fire(alerts, "waiting", DAY), 2 * DAY)
    told = _resolve(alerts, _fire(alerts, "told", DAY), 2 * DAY)
    _notify(settings, waiting.id, "pending")
    _notify(settings, told.id, "delivered")
    _notify(settings, told.id, "abandoned")
    assert alerts.prune(NOW) == PrunedAlerts(alerts=1, transitions=2, notifications=2)
    assert alerts.get(waiting.id) is not None and alerts.get(told.id) is None
    assert _rows(settings, "SELECT alert_id FROM notifications") == ["waiting"]


def test_prune_metric_counters_unchanged(alerts: AlertStore) -> None:
    for i, replayed in enumerate((100, 20)):
        _resolve(alerts, _fire(alerts, f"r{i}", DAY, replayed=replayed), 2 * DAY)
    _resolve(alerts, _fire(alerts, "drill", DAY, group=DRILL_PREFIX, replayed=7), 2 * DAY)
    _fire(alerts, "live", 3 * DAY, replayed=3)
    before = (alerts.incident_totals(), alerts.magnitude_totals())
    assert before[0] == {("offset_rewind", C): 6}  # 3 non-drill alerts x 2 occurrences
    assert alerts.prune(NOW).alerts == 3
    assert (alerts.incident_totals(), alerts.magnitude_totals()) == before
    _resolve(alerts, _fire(alerts, "later", 5 * DAY, replayed=1), 6 * DAY)  # tallies add up
    alerts.prune(NOW)
    assert alerts.incident_totals() == {("offset_rewind", C): 8}
    assert alerts.magnitude_totals()[("replayed", C)] == 124


def test_store_settings_alerts_retention_defaults_to_90_days() -> None:
    assert StoreSettings().alerts_retention_days == 90.0


@pytest.mark.parametrize(
    "values",
    [{"alerts_retention_days": 0.5}, {"alerts_retention_days": 10, "retention_days": 14}],
    ids=["under_a_day", "shorter_than_history"],
)
def test_store_settings_alerts_retention_too_short_rejected(values: dict[str, float]) -> None:
    with pytest.raises(ValidationError, match="alerts_retention_days"):
        StoreSettings.model_validate(values)
