"""The write gate (store.gate): this process's writers of one SQLite file take its lock in arrival order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import store.db as db
from collectors.errors import StoreError
from store.db import SqliteConnection, connect, transaction, translated
from store.gate import WriteGate, gate_for


def _queue(gate: WriteGate, name: str, order: list[str]) -> threading.Thread:
    """A thread that waits its turn at ``gate``, notes ``name`` and ends its turn; started, and known to
    be waiting when this returns."""
    before = gate.waiting

    def turn() -> None:
        assert gate.acquire(60.0)
        order.append(name)
        gate.release()

    t = threading.Thread(target=turn)
    t.start()
    for _ in range(6000):  # until it holds a ticket (bounded: 60 s)
        if gate.waiting > before:
            break
        time.sleep(0.01)
    assert gate.waiting == before + 1
    return t


def test_gate_turns_go_in_arrival_order_and_one_beginning_again_queues_behind() -> None:
    gate = WriteGate()
    order: list[str] = []
    assert gate.acquire(1.0)
    waiters = [_queue(gate, name, order) for name in ("a", "b", "c")]
    gate.release()
    assert gate.acquire(60.0)  # the holder beginning again: after the three already waiting
    order.append("holder")
    gate.release()
    for t in waiters:
        t.join(60.0)
    assert order == ["a", "b", "c", "holder"]
    assert gate.waiting == 0


def test_gate_waiter_that_gives_up_holds_nothing_and_its_ticket_is_skipped() -> None:
    gate = WriteGate()
    order: list[str] = []
    assert gate.acquire(1.0)
    assert not gate.acquire(0.05)  # gave up: its ticket is left
    late = _queue(gate, "late", order)
    gate.release()
    late.join(60.0)
    assert order == ["late"]
    assert gate.acquire(0.0)  # free again: nobody holds a turn
    gate.release()


def test_gate_one_per_file_however_spelled(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert gate_for(tmp_path / "d" / ".." / "x.db") is gate_for(tmp_path / "x.db")
    assert gate_for(tmp_path / "x.db") is not gate_for(tmp_path / "y.db")


@pytest.fixture
def two_writers(tmp_path: Path) -> Iterator[tuple[SqliteConnection, SqliteConnection]]:
    a, b = connect(tmp_path / "g.db"), connect(tmp_path / "g.db")
    a.execute("CREATE TABLE t (x INTEGER)")
    yield a, b
    a.close()
    b.close()


def test_transaction_waits_its_turn_then_fails_as_a_locked_database(
    two_writers: tuple[SqliteConnection, SqliteConnection], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two_writers
    assert a.gate is b.gate is not None
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)
    with transaction(a):
        a.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(StoreError, match="database is locked"), translated("write t"), transaction(b):
            b.execute("INSERT INTO t VALUES (2)")
    with transaction(b):  # the gate was left free by the writer that gave up
        b.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in a.execute("SELECT x FROM t ORDER BY x")] == [1, 3]


def test_transaction_rolled_back_ends_its_turn(
    two_writers: tuple[SqliteConnection, SqliteConnection],
) -> None:
    a, b = two_writers
    with pytest.raises(RuntimeError), transaction(a):
        a.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("planned")
    with transaction(b):
        b.execute("INSERT INTO t VALUES (2)")
    assert [r[0] for r in a.execute("SELECT x FROM t")] == [2]
    assert a.gate is not None and a.gate.waiting == 0
