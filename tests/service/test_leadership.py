"""The leadership state machine (service.ha.leadership) over real leases on one store file, with writers
that record what they are told (the seam between the leadership and the runtime's writers)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.errors import FencedError, StoreWriteError
from service.ha.leadership import ACTIVE, STANDBY, Leadership, ha_enabled, replica_id
from service.settings import Settings
from store.db import Connection, connect
from store.health import StoreHealth
from store.lease import Lease

SHORT = 0.4


class Writers:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    async def promote(self, epoch: int) -> None:
        self.calls.append(("promote", epoch))

    async def demote(self) -> None:
        self.calls.append("demote")

    async def retire(self) -> None:
        self.calls.append("retire")


class Database:
    """Connections to the test's file, refused while ``down`` (a restarting database)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.down = False

    def connect(self) -> Connection:
        if self.down:
            raise OSError("connection refused")
        return connect(self.path)


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(tmp_path / "og.db")


@pytest.fixture
def make(db: Database) -> Iterator[Any]:
    made: list[Leadership] = []

    def build(name: str, seconds: float = SHORT) -> tuple[Leadership, Writers]:
        writers = Writers()
        leadership = Leadership(Lease(db.connect, name, seconds), renew_seconds=seconds / 4, writers=writers)
        made.append(leadership)
        return leadership, writers

    yield build
    for leadership in made:
        leadership.lease.close()


async def test_leadership_first_replica_promoted_starts_writers(make: Any) -> None:
    a, writers = make("a")
    await a.run_once()
    assert (a.role, a.epoch, a.may_send(), writers.calls) == (ACTIVE, 1, True, [("promote", 1)])
    await a.run_once()  # renewed: nothing restarted
    assert writers.calls == [("promote", 1)]
    assert a.view() | {"lease_seconds": None} == {
        "role": "active",
        "replica": "a",
        "holder": "a",
        "epoch": 1,
        "lease_seconds": None,
        "promotions": 1,
        "step_downs": 0,
    }


async def test_leadership_second_replica_stays_standby_while_active_renews(make: Any) -> None:
    a, _ = make("a")
    b, writers = make("b")
    await a.run_once()
    for _ in range(3):
        await b.run_once()
        await a.run_once()
    assert (b.role, b.epoch, b.may_send(), writers.calls) == (STANDBY, None, False, [])
    assert b.view()["holder"] == "a"


async def test_leadership_frozen_active_replaced_then_steps_down_on_waking(make: Any) -> None:
    a, a_writers = make("a")
    b, b_writers = make("b")
    await a.run_once()
    await b.run_once()
    await asyncio.sleep(SHORT + 0.1)  # a is frozen: no renewal
    assert not a.may_send()  # its local deadline passed: nothing is sent even before it learns more
    await b.run_once()
    assert (b.role, b.epoch, b_writers.calls) == (ACTIVE, 2, [("promote", 2)])
    await a.run_once()  # a wakes
    assert (a.role, a_writers.calls) == (STANDBY, [("promote", 1), "demote"])
    await a.run_once()
    assert a_writers.calls == [("promote", 1), "demote"]  # not again while b renews


async def test_leadership_fenced_write_steps_down_before_the_next_cycle(make: Any, db: Database) -> None:
    writers = Writers()
    # renewals a minute apart: only the fenced write can wake it in time
    a = Leadership(Lease(db.connect, "a", SHORT), renew_seconds=60.0, writers=writers)
    b, _ = make("b")
    await a.start()
    await asyncio.sleep(SHORT + 0.1)
    await b.run_once()  # b took over; a has not cycled since
    conn = connect(db.path)
    try:
        with pytest.raises(FencedError):
            a.fence(conn)  # what a's next guarded write runs first, in a writer thread
    finally:
        conn.close()
    assert not a.may_send()  # sends stop at once, before the step-down
    for _ in range(100):
        if a.role == STANDBY:
            break
        await asyncio.sleep(0.01)
    assert (a.role, writers.calls) == (STANDBY, [("promote", 1), "demote"])
    await a.stop()
    assert writers.calls == [("promote", 1), "demote"]  # a standby retires nothing


async def test_leadership_stop_retires_writers_and_releases_lease(make: Any) -> None:
    a, a_writers = make("a", 10.0)
    b, b_writers = make("b", 10.0)
    await a.start()
    await b.start()
    assert (a.role, b.role) == (ACTIVE, STANDBY)
    await a.stop()
    assert a_writers.calls == [("promote", 1), "retire"]
    await b.run_once()  # at once, not 10 s later: the lease was released
    assert (b.role, b_writers.calls) == (ACTIVE, [("promote", 2)])
    await b.stop()


async def test_leadership_database_down_keeps_role_holds_sends_renews_same_epoch(
    make: Any, db: Database
) -> None:
    a, writers = make("a")
    await a.run_once()
    a.lease.close()
    db.down = True
    await asyncio.sleep(SHORT + 0.1)
    await a.run_once()  # the cycle fails: kept (nobody can take it without the database)
    assert (a.role, a.may_send()) == (ACTIVE, False)
    db.down = False
    await a.run_once()
    assert (a.role, a.epoch, a.may_send(), writers.calls) == (ACTIVE, 1, True, [("promote", 1)])


def test_leadership_ha_enabled_defaults_follow_the_store() -> None:
    assert ha_enabled(Settings()) is False
    assert ha_enabled(Settings(ha={"enabled": True})) is True
    assert ha_enabled(Settings(store={"url": "postgresql://og@db:5432/og"})) is True
    assert ha_enabled(Settings(store={"url": "postgresql://og@db:5432/og"}, ha={"enabled": False})) is False


def test_leadership_replica_id_default_is_host_and_pid() -> None:
    assert replica_id(Settings(ha={"replica_id": "pod-0"})) == "pod-0"
    assert replica_id(Settings()).endswith(f"-{os.getpid()}")


def test_leadership_settings_refuse_renewals_that_do_not_fit_the_lease() -> None:
    with pytest.raises(ValueError, match="renew_seconds"):
        Settings(ha={"lease_seconds": 5, "renew_seconds": 2})


async def test_leadership_standby_lease_cycles_heal_the_store_health(make: Any, db: Database) -> None:
    a, _ = make("a")
    health = StoreHealth("og", settle_seconds=0.0)
    b = Leadership(Lease(db.connect, "b", SHORT), renew_seconds=SHORT / 4, health=health)
    await a.run_once()
    health.failed(StoreWriteError("queue notifications failed", code="PG_CONNECTION"))
    assert not health.view().healthy
    await b.run_once()  # a standby: its lease cycle is the write that says the database takes them
    assert (b.role, health.view().healthy) == (STANDBY, True)
    b.lease.close()
