"""The leader lease (store.lease) and the fencing guard (store.fencing): two replicas' objects on one
database, SQLite file and PostgreSQL alike (the ``settings`` fixture runs each test on both)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from collectors.errors import FencedError, StoreError
from service.detection.lifecycle import LifecycleRules, plan
from store.alert_records import Alert, AlertWrite, Fingerprint
from store.alerts import AlertStore
from store.db import connect_to
from store.fencing import Fence, fence_alerts
from store.lease import Lease, dialect_of, read_row
from store.settings import StoreSettings
from tests.service.detection.builders import C, lag, rewind

SHORT = 0.4  # seconds: a lease that runs out within a test


def _lease(settings: StoreSettings, holder: str, seconds: float = SHORT, **kw: float) -> Lease:
    return Lease(lambda: connect_to(settings), holder, seconds, **kw)


@pytest.fixture
def migrated(settings: StoreSettings) -> StoreSettings:
    AlertStore.open(settings).close()  # the database exists, migrated, as the service has it
    return settings


@pytest.fixture
def pair(migrated: StoreSettings) -> Iterator[tuple[Lease, Lease]]:
    a, b = _lease(migrated, "a"), _lease(migrated, "b")
    yield a, b
    a.close()
    b.close()


def test_lease_first_cycle_takes_it_at_epoch_one(pair: tuple[Lease, Lease]) -> None:
    a, b = pair
    first = a.cycle()
    assert (first.held, a.epoch, a.valid()) == (True, 1, True)
    other = b.cycle()
    assert (other.held, b.epoch, b.valid()) == (False, None, False)
    assert other.row is not None and (other.row.holder, other.row.epoch) == ("a", 1)


def test_lease_renew_keeps_epoch_and_moves_expiry(pair: tuple[Lease, Lease]) -> None:
    a, _ = pair
    one = a.cycle()
    time.sleep(0.01)  # SQLite's clock counts milliseconds
    two = a.cycle()
    assert two.held and two.row is not None and one.row is not None
    assert two.row.epoch == 1
    assert two.row.expires_at > one.row.expires_at
    assert two.row.expires_at == pytest.approx(two.now + SHORT)


def test_lease_standby_cannot_take_before_expiry(pair: tuple[Lease, Lease]) -> None:
    a, b = pair
    a.cycle()
    for _ in range(3):
        assert not b.cycle().held
        a.cycle()
    row = b.read()
    assert row is not None and (row.holder, row.epoch) == ("a", 1)


def test_lease_expired_is_taken_over_with_next_epoch(pair: tuple[Lease, Lease]) -> None:
    a, b = pair
    a.cycle()
    time.sleep(SHORT + 0.1)
    took = b.cycle()
    assert (took.held, b.epoch) == (True, 2)
    # the old holder's renew fails: holder and epoch are no longer its own
    back = a.cycle()
    assert (back.held, a.epoch, a.valid()) == (False, None, False)
    assert back.row is not None and (back.row.holder, back.row.epoch) == ("b", 2)


def test_lease_own_expired_lease_untaken_is_renewed_at_same_epoch(pair: tuple[Lease, Lease]) -> None:
    a, _ = pair
    a.cycle()
    time.sleep(SHORT + 0.1)  # e.g. the database restarted: no renewal, nobody took it over
    assert not a.valid()  # the local deadline ran out first
    again = a.cycle()
    assert (again.held, a.epoch, a.valid()) == (True, 1, True)


def test_lease_restarted_replica_takes_its_old_lease_at_next_epoch(
    migrated: StoreSettings, pair: tuple[Lease, Lease]
) -> None:
    a, _ = pair
    a.cycle()
    time.sleep(SHORT + 0.1)
    reborn = _lease(migrated, "a")  # same holder name, a new process: it never held epoch 1
    assert reborn.cycle().held and reborn.epoch == 2
    assert not a.cycle().held  # the old one's epoch is gone
    reborn.close()


def test_lease_release_lets_standby_take_at_once(pair: tuple[Lease, Lease]) -> None:
    a, b = pair
    a.cycle()
    assert a.release() is True
    assert (a.epoch, a.valid()) == (None, False)
    assert b.cycle().held and b.epoch == 2
    assert a.release() is False  # not ours any more: nothing to release


def test_lease_local_deadline_is_before_database_expiry(migrated: StoreSettings) -> None:
    ticks = iter([100.0, 100.0])
    lease = Lease(lambda: connect_to(migrated), "a", 10.0, margin_seconds=2.0, monotonic=lambda: next(ticks))
    lease.cycle()
    assert lease.remaining() == pytest.approx(8.0)  # taken before the transaction, minus the margin
    lease.close()


def test_lease_unreachable_database_raises_store_error(tmp_path: Path) -> None:
    lease = _lease(StoreSettings(path=tmp_path / "missing-dir" / "x.db"), "a")
    with pytest.raises(StoreError, match="not renewed"):
        lease.cycle()
    assert lease.epoch is None


# ------------------------------------------------------------------ fencing


def _cycle(alerts: AlertStore, now: float, findings: Sequence[object] | None = None) -> tuple[Alert, ...]:
    def planner(
        firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
    ) -> Sequence[AlertWrite]:
        nonlocal findings
        findings = findings if findings is not None else [rewind(at=now)]
        return plan(firing, findings, frozenset(), {}, now, LifecycleRules(), resolved=resolved).writes  # type: ignore[arg-type]

    return alerts.update_firing(C, planner, now, resolved_since=now - 3600)


def test_fence_holder_writes_pass(settings: StoreSettings, pair: tuple[Lease, Lease]) -> None:
    a, _ = pair
    a.cycle()
    with AlertStore.open(settings) as alerts:
        fence_alerts(alerts, Fence(a))
        [written] = _cycle(alerts, 10.0)
        assert [x.id for x in alerts.firing(C)] == [written.id]


def test_fence_frozen_holder_write_is_refused_and_changes_nothing(
    settings: StoreSettings, pair: tuple[Lease, Lease]
) -> None:
    a, b = pair
    a.cycle()
    told: list[FencedError] = []
    with AlertStore.open(settings) as alerts, AlertStore.open(settings) as reader:
        fence = Fence(a, told.append)
        fence_alerts(alerts, fence)
        time.sleep(SHORT + 0.1)  # "frozen": the lease runs out, the standby takes it
        assert b.cycle().held
        assert a.epoch == 1  # the frozen replica still believes it holds epoch 1
        with pytest.raises(FencedError) as caught:
            _cycle(alerts, 10.0)
        assert (caught.value.epoch, caught.value.current_holder, caught.value.current_epoch) == (1, "b", 2)
        assert reader.firing(C) == ()  # nothing was written
        assert [e.current_epoch for e in told] == [2]
        assert (a.epoch, fence.refused) == (None, 1)  # forgotten locally: the next writes fail at once
        with pytest.raises(FencedError, match="does not hold"):
            _cycle(alerts, 11.0)


def test_fence_expired_lease_nobody_took_is_refused_until_renewed(
    settings: StoreSettings, pair: tuple[Lease, Lease]
) -> None:
    a, _ = pair
    a.cycle()
    told: list[FencedError] = []
    with AlertStore.open(settings) as alerts:
        fence_alerts(alerts, Fence(a, told.append))
        time.sleep(SHORT + 0.1)
        with pytest.raises(FencedError, match="ran out"):
            _cycle(alerts, 10.0)
        assert alerts.firing(C) == ()
        assert (a.epoch, told) == (1, [])  # kept: not another replica's, no step-down
        a.cycle()  # renewed at the same epoch
        [written] = _cycle(alerts, 11.0)
        assert [x.id for x in alerts.firing(C)] == [written.id]


def test_fence_fenced_write_does_not_mark_store_failing(
    settings: StoreSettings, pair: tuple[Lease, Lease]
) -> None:
    a, _ = pair
    with AlertStore.open(settings) as alerts:
        fence_alerts(alerts, Fence(a))
        with pytest.raises(FencedError):
            _cycle(alerts, 10.0)
        assert alerts.health.view().healthy


def test_fence_ack_through_other_store_is_seen_by_fenced_writer(
    settings: StoreSettings, pair: tuple[Lease, Lease]
) -> None:
    a, _ = pair
    a.cycle()
    with AlertStore.open(settings) as alerts, AlertStore.open(settings) as api:
        fence_alerts(alerts, Fence(a))
        [fired] = _cycle(alerts, 10.0, [lag(20_000)])
        api.ack(fired.id, "alice", "seen", 20.0)  # another replica's (unfenced) user action
        [changed] = _cycle(alerts, 30.0, [lag(40_000, severity="critical")])  # written again
        stored = api.get(fired.id)
        assert stored is not None and (stored.status, stored.ack_by, stored.acked_at) == (
            "firing",
            "alice",
            20.0,
        )
        assert changed.ack_by == "alice"


class _SaysWhenItBegins:
    """A connection that sets ``began`` as a transaction begins on it, once ``armed`` (then begins it)."""

    def __init__(self, conn: Any, began: threading.Event, armed: threading.Event) -> None:
        self._conn, self._began, self._armed = conn, began, armed

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("BEGIN") and self._armed.is_set():
            self._began.set()
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_fence_refusal_does_not_wait_for_a_lease_cycle_waiting_for_its_transaction(
    migrated: StoreSettings,
) -> None:
    """A replica woken from SIGSTOP: its refused write holds the lease row (the row lock, SQLite's write
    lock) while its lease cycle waits for that row. Forgetting the lease must not wait for the cycle: they
    deadlocked until the database's lock timeout (5 s), and the active replica's renewals, waiting for
    the same row, let its lease lapse: the woken one took it over (CI of 4efa1b6)."""
    began, armed = threading.Event(), threading.Event()
    a = Lease(lambda: _SaysWhenItBegins(connect_to(migrated), began, armed), "a", SHORT)
    b = _lease(migrated, "b", 60.0)
    told: list[FencedError] = []
    fence = Fence(a, told.append)
    writer = connect_to(migrated)
    try:
        a.cycle()
        time.sleep(SHORT + 0.1)  # "frozen": a's lease runs out, b takes it
        assert b.cycle().held
        writer.execute(dialect_of(writer).begin)  # a's write, woken: it holds the lease row...
        read_row(writer, a.name, lock=True)
        armed.set()
        with ThreadPoolExecutor(1) as pool:
            cycle = pool.submit(a.cycle)  # ...that a's lease cycle waits for
            assert began.wait(30)
            with pytest.raises(FencedError):
                fence(writer)
            writer.execute("ROLLBACK")
            after = cycle.result()  # StoreError (the lock timeout) when the refusal waited for it
        assert after.row is not None and (after.held, after.row.holder, after.row.epoch) == (False, "b", 2)
        assert ([e.current_epoch for e in told], a.epoch) == ([2], None)
    finally:
        writer.close()
        a.close()
        b.close()
