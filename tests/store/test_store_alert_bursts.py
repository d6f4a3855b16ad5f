"""A fleet's burst of alert writes (AlertStore.update_firing, store.alerts.WRITES_PER_TRANSACTION a
transaction): other writers and the /metrics counters get through while it is written, and what it wrote
is what the next evaluation plans from, whole or cut short."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import pytest

import store.alerts as alerts_module
from alerts.model import Finding
from collectors.errors import StoreWriteError
from service.detection.lifecycle import LifecycleRules, plan
from store.alert_records import Alert, AlertWrite, Fingerprint
from store.alerts import AlertStore
from store.db import Connection, connect_to, transaction
from store.settings import StoreSettings
from tests.service.detection.builders import C, lag

RULES = LifecycleRules()


@pytest.fixture
def alerts(settings: StoreSettings) -> Iterator[AlertStore]:
    with AlertStore.open(settings) as opened:
        yield opened


def _lags(n: int, value: int = 20_000) -> list[Finding]:
    return [lag(value, group=f"g{i:05d}") for i in range(n)]


def _planner(
    findings: Sequence[Finding], now: float, seen: list[AlertWrite] | None = None
) -> alerts_module.Planner:
    def planner(
        firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
    ) -> Sequence[AlertWrite]:
        writes = plan(firing, findings, frozenset({"lag_high"}), {}, now, RULES, resolved=resolved).writes
        if seen is not None:
            seen.extend(writes)
        return writes

    return planner


def _until(condition: object, what: str) -> None:
    for _ in range(6000):  # bounded: 60 s
        if callable(condition) and condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.sqlite_only
def test_burst_of_20000_lets_another_writer_and_the_counters_through_while_it_is_written(
    alerts: AlertStore, settings: StoreSettings
) -> None:
    findings = _lags(20_000)
    other = connect_to(settings)
    gate = getattr(other, "gate", None)
    assert gate is not None
    seen_by_other: list[int] = []
    counted: list[dict[tuple[str, str, str], int]] = []

    def other_write() -> None:  # as the offsets collector's write: its own connection, its own transaction
        with transaction(other) as conn:
            seen_by_other.append(int(conn.execute("SELECT COUNT(*) FROM alerts").fetchone()[0]))
            conn.execute(
                "INSERT INTO tail_positions (cluster, partition, next_offset, updated_at)"
                " VALUES ('x', 0, 1, 1.0)"
            )

    writer = threading.Thread(target=other_write)
    render = threading.Thread(target=lambda: counted.append(alerts.firing_counts()))
    inner = _planner(findings, 100.0)

    def planner(
        firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
    ) -> Sequence[AlertWrite]:
        # called holding the store's lock, in the burst's first transaction
        render.start()
        render.join(60.0)  # the counters are read beside the writer: they never wait for it
        writer.start()
        _until(lambda: gate.waiting >= 1, "the other writer waiting its turn")
        return inner(firing, resolved)

    try:
        written = alerts.update_firing(C, planner, 100.0)
        writer.join(60.0)
    finally:
        other.close()
    assert counted == [{}]  # read while the first transaction was open: nothing committed yet
    [count] = seen_by_other
    assert count == alerts_module.WRITES_PER_TRANSACTION  # it went right after the first transaction
    assert len(written) == 20_000 and [a.group for a in written] == [f.group for f in findings]
    assert alerts.firing_counts() == {("lag_high", "warning", C): 20_000}
    assert alerts.update_firing(C, _planner(findings, 101.0), 101.0) == ()  # nothing new to write


def test_burst_in_several_transactions_is_planned_from_as_written(
    alerts: AlertStore, settings: StoreSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alerts_module, "WRITES_PER_TRANSACTION", 3)
    findings = _lags(10)
    fired = alerts.update_firing(C, _planner(findings, 100.0), 100.0)
    seqs = [a.seq or 0 for a in fired]
    assert seqs == sorted(seqs) and len(set(seqs)) == 10 and 0 not in seqs
    grown = [replace(f, magnitude={"lag": 30_000, "lag_seconds": None}) for f in findings]
    planned: list[AlertWrite] = []
    refreshed = alerts.update_firing(C, _planner(grown, 140.0, planned), 140.0)  # past the 30 s refresh
    assert len(refreshed) == 10 and [a.id for a in refreshed] == [a.id for a in fired]
    stored = {a.id: a for a in alerts.firing(C)}
    assert all(stored[a.id].magnitude["lag"] == 30_000 for a in fired)
    with AlertStore.open(settings) as reopened:
        assert [a.id for a in reopened.firing(C)] == [a.id for a in fired]
        assert reopened.update_firing(C, _planner(grown, 141.0), 141.0) == ()


def test_burst_cut_short_keeps_what_was_written_and_the_next_evaluation_writes_the_rest_once(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alerts_module, "WRITES_PER_TRANSACTION", 3)
    transactions = 0

    def disk_fills_on_the_second(conn: Connection) -> None:
        nonlocal transactions
        transactions += 1
        if transactions == 2:
            raise StoreWriteError("update alerts failed: database or disk is full", code="SQLITE_FULL")

    alerts.guard = disk_fills_on_the_second
    findings = _lags(7)
    with pytest.raises(StoreWriteError):
        alerts.update_firing(C, _planner(findings, 100.0), 100.0)
    first = alerts.firing(C)
    assert [a.group for a in first] == ["g00000", "g00001", "g00002"]
    rest = alerts.update_firing(C, _planner(findings, 105.0), 105.0)
    assert [a.group for a in rest] == [f"g{i:05d}" for i in range(3, 7)]  # the three are not fired again
    assert [a.group for a in alerts.firing(C)] == [f.group for f in findings]
    assert [a.id for a in alerts.firing(C)][:3] == [a.id for a in first]
