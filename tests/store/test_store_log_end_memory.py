"""The kept log-end rows (store.log_end_memory) answer exactly what SQL answers, on both backends.

Every answer of :meth:`Store.log_end_reached_at` / ``_many`` is compared with the SQL query run on the
test's own connection, over randomized histories: several clusters, growth, falls (a re-created topic),
same-instant replaces, observations older than the newest row (a clock set back, before and after a
reopen), metadata rows without a log end, thinning, another replica writing (PostgreSQL), a failed write.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

import store.db as db
from collectors.errors import StoreError
from collectors.model import (
    ClusterMetadata,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
)
from store import Store
from store.db import Connection, connect_to
from store.log_end_memory import KEEP
from store.log_end_times import log_end_reached_at_many
from store.queries import log_end_reached_at
from store.settings import StoreSettings

T0 = 1_700_000_000.0
CLUSTERS = ("c1", "c2")
TOPICS = ("t", "u")
PARTITIONS = (0, 1, 2)
KEYS = [(c, t, p) for c in CLUSTERS for t in TOPICS for p in PARTITIONS]


@pytest.fixture
def sql(raw: Connection) -> Connection:
    """The test's own connection: the SQL answers to compare with."""
    return raw


class History:
    """Random observations of KEYS written through a store, with the state needed to ask about them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.at = T0
        self.ends = {k: rng.randrange(0, 50) for k in KEYS}
        self.seen: dict[tuple[str, str, int], set[int]] = {k: set() for k in KEYS}

    def step(self, store: Store) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            at = self.at - rng.choice((1.0, 7.5, 30.0, 600.0))  # older than rows already stored
        elif roll < 0.2:
            at = self.at  # the same instant again: a replace
        else:
            self.at += rng.choice((5.0, 5.0, 5.0, 0.25, 120.0))
            at = self.at
        cluster = rng.choice(CLUSTERS)
        keys = [k for k in KEYS if k[0] == cluster and rng.random() < 0.8]
        if rng.random() < 0.15:
            infos = tuple(
                PartitionInfo(t, p, rng.choice((1, 2, None)), rng.randrange(5), (1, 2), (1, 2))
                for (_, t, p) in keys
            )
            topics = tuple(TopicInfo(t, False, tuple(i for i in infos if i.topic == t)) for t in TOPICS)
            extra = TopicInfo("v", False, (PartitionInfo("v", 0, 1, rng.randrange(5), (1,), (1,)),))
            store.record_metadata(ClusterMetadata(cluster, at, "id", 1, (), (*topics, extra)))
            return
        parts = []
        for k in keys:
            move = rng.random()
            if move < 0.08:
                self.ends[k] = rng.randrange(0, 10)  # a fall: truncation, a re-created topic
            elif move < 0.75:
                self.ends[k] += rng.randrange(1, 6)
            self.seen[k].add(self.ends[k])
            parts.append(PartitionOffsets(k[1], k[2], 0, self.ends[k]))
        store.record_offsets(OffsetsObservation(cluster, at, tuple(parts)))

    def wanted(self, cluster: str, n: int) -> list[tuple[str, int, int]]:
        out = []
        for _ in range(n):
            k = self.rng.choice([k for k in KEYS if k[0] == cluster])
            near = self.rng.choice(sorted(self.seen[k] | {0, self.ends[k]}))
            out.append((k[1], k[2], max(0, near + self.rng.choice((-1, 0, 1, 2)))))
        out.append(("v", 0, 1))  # a partition whose rows have no log end
        out.append(("missing", 0, 1))
        return out


def assert_same(store: Store, sql: Connection, history: History) -> None:
    for cluster in CLUSTERS:
        wanted = history.wanted(cluster, 40)
        expected = log_end_reached_at_many(sql, cluster, wanted)
        assert store.log_end_reached_at_many(cluster, wanted) == expected
        for w in wanted[:15]:
            until = history.rng.choice((None, history.at - 20.0, history.at - 300.0, history.at))
            assert store.log_end_reached_at(cluster, *w, until=until) == log_end_reached_at(
                sql, cluster, *w, until
            ), (cluster, w, until)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_log_end_memory_random_histories_same_answers_as_sql(
    settings: StoreSettings, sql: Connection, seed: int
) -> None:
    history = History(random.Random(seed))
    with Store.open(settings) as store:
        for _ in range(40):
            history.step(store)
        assert_same(store, sql, history)
    history.at -= 900.0  # the reopened process's clock is behind the stored rows for a while
    with Store.open(settings) as store:
        for step in range(160):
            history.step(store)
            if step % 7 == 0:
                assert_same(store, sql, history)
            if step % 40 == 39:  # thinning whose full-resolution horizon falls inside the rows kept
                store.thin(history.at + 86_400.0 - history.rng.choice((30.0, 200.0, 900.0)))
                assert_same(store, sql, history)
        counts = store.log_end_lookups()
    # the memory did answer (the comparison is not of SQL with itself), and SQL was still needed
    assert counts.memory > 300
    assert counts.sql > 300


def test_log_end_memory_new_partition_answered_without_sql(store: Store, sql: Connection) -> None:
    for i in range(KEEP):
        store.record_offsets(OffsetsObservation("c1", T0 + i, (PartitionOffsets("t", 0, 0, 10 * (i + 1)),)))
    before = store.log_end_lookups()
    # inserted by this store: every row is kept, the first crossing included
    assert store.log_end_reached_at("c1", "t", 0, 5) == T0
    assert store.log_end_reached_at("c1", "t", 0, 55) == T0 + 5
    assert store.log_end_reached_at("c1", "t", 0, 10 * KEEP + 1) is None
    last = 10 * KEEP - 5  # reached by the last row
    assert store.log_end_reached_at_many("c1", [("t", 0, 5), ("t", 0, last)]) == {
        ("t", 0, 5): T0,
        ("t", 0, last): T0 + KEEP - 1,
    }
    after = store.log_end_lookups()
    assert (after.memory - before.memory, after.sql - before.sql) == (5, 0)
    # one row more than kept: the first is dropped, and a crossing before the kept rows is SQL's
    store.record_offsets(OffsetsObservation("c1", T0 + KEEP, (PartitionOffsets("t", 0, 0, 10 * KEEP + 10),)))
    assert store.log_end_reached_at("c1", "t", 0, 5) == log_end_reached_at(sql, "c1", "t", 0, 5, None) == T0
    assert store.log_end_lookups().sql == after.sql + 1


def test_log_end_memory_reopened_store_takes_in_after_the_newest_stored_row(
    settings: StoreSettings, sql: Connection
) -> None:
    with Store.open(settings) as store:
        store.record_offsets(OffsetsObservation("c1", T0 + 100, (PartitionOffsets("t", 0, 0, 50),)))
    with Store.open(settings) as store:
        # clock set back: this row is older than the stored one, so the kept rows would not be a suffix
        store.record_offsets(OffsetsObservation("c1", T0 + 50, (PartitionOffsets("t", 0, 0, 10),)))
        assert store.log_end_reached_at("c1", "t", 0, 20) == T0 + 100
        assert store.log_end_lookups().memory == 0
        store.record_offsets(OffsetsObservation("c1", T0 + 200, (PartitionOffsets("t", 0, 0, 5),)))
        store.record_offsets(OffsetsObservation("c1", T0 + 205, (PartitionOffsets("t", 0, 0, 30),)))
        assert store.log_end_reached_at("c1", "t", 0, 20) == T0 + 205
        assert store.log_end_lookups().memory == 1
        assert log_end_reached_at(sql, "c1", "t", 0, 20, None) == T0 + 205


def test_log_end_memory_failed_write_forgets_its_partitions(
    settings: StoreSettings,
    sql: Connection,
    monkeypatch: pytest.MonkeyPatch,
    hold_write_lock: Callable[[], AbstractContextManager[None]],
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 20)
    with Store.open(settings) as store:
        for i in range(3):
            store.record_offsets(OffsetsObservation("c1", T0 + i, (PartitionOffsets("t", 0, 0, 10 * i),)))
        assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 2
        with hold_write_lock(), pytest.raises(StoreError):
            store.record_offsets(OffsetsObservation("c1", T0 + 3, (PartitionOffsets("t", 0, 0, 40),)))
        before = store.log_end_lookups()
        assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 2
        assert store.log_end_lookups().sql == before.sql + 1  # forgotten: SQL answers
        assert log_end_reached_at(sql, "c1", "t", 0, 15, None) == T0 + 2


def test_log_end_memory_not_used_while_the_replica_may_not_write(store: Store, sql: Connection) -> None:
    epoch: list[int | None] = [1]
    store.writer_epoch = lambda: epoch[0]
    for i in range(3):
        store.record_offsets(OffsetsObservation("c1", T0 + i, (PartitionOffsets("t", 0, 0, 10 * i),)))
    assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 2
    assert store.log_end_lookups().memory == 1
    epoch[0] = None  # a standby: whatever it kept, the active replica may have written since
    assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 2
    assert store.log_end_lookups().memory == 1
    epoch[0] = 2  # promoted again, at another epoch: the rows kept at epoch 1 are forgotten
    assert store.log_end_reached_at_many("c1", [("t", 0, 15)]) == {("t", 0, 15): T0 + 2}
    assert store.log_end_lookups().memory == 1


def test_postgresql_log_end_memory_another_replica_writing_sends_reads_to_sql(
    postgres_url: str, tmp_path: Path
) -> None:
    settings = StoreSettings(path=tmp_path / "unused.db", url=postgres_url)
    sql = connect_to(settings)
    with Store.open(settings) as store, Store.open(settings) as other:
        for i in range(3):
            store.record_offsets(OffsetsObservation("c1", T0 + i, (PartitionOffsets("t", 0, 0, 10 * i),)))
        assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 2
        assert store.log_end_lookups().memory == 1
        # the other replica: the log end falls and crosses 15 again later
        other.record_offsets(OffsetsObservation("c1", T0 + 3, (PartitionOffsets("t", 0, 0, 1),)))
        other.record_offsets(OffsetsObservation("c1", T0 + 4, (PartitionOffsets("t", 0, 0, 20),)))
        assert store.log_end_reached_at("c1", "t", 0, 15) == T0 + 4
        assert store.log_end_reached_at_many("c1", [("t", 0, 15)]) == {("t", 0, 15): T0 + 4}
        assert store.log_end_lookups().memory == 1
        # its next write reloads: the memory starts again from the rows it writes
        store.record_offsets(OffsetsObservation("c1", T0 + 5, (PartitionOffsets("t", 0, 0, 30),)))
        store.record_offsets(OffsetsObservation("c1", T0 + 6, (PartitionOffsets("t", 0, 0, 40),)))
        assert store.log_end_reached_at("c1", "t", 0, 35) == T0 + 6
        assert store.log_end_lookups().memory == 2
        assert log_end_reached_at(sql, "c1", "t", 0, 15, None) == T0 + 4
    sql.close()


def test_log_end_memory_closed_store_raises(tmp_path: Path) -> None:
    store = Store.open(StoreSettings(path=tmp_path / "og.db"))
    store.record_offsets(OffsetsObservation("c1", T0, (PartitionOffsets("t", 0, 0, 10),)))
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.log_end_reached_at("c1", "t", 0, 5)
    with pytest.raises(StoreError, match="closed"):
        store.log_end_reached_at_many("c1", [("t", 0, 5)])


def test_log_end_memory_reads_beside_writes_see_one_crossing_each(store: Store, sql: Connection) -> None:
    """Readers on two threads while the writer records: a growing log end's crossing, once known, is
    the same in every answer, and the same as SQL's at the end."""
    wanted = [("t", p, x) for p in range(4) for x in (5, 50, 120, 400)]
    seen: dict[tuple[str, int, int], set[float]] = {w: set() for w in wanted}
    failures: list[BaseException] = []
    done = threading.Event()

    def read() -> None:
        try:
            while not done.is_set():
                for w, at in store.log_end_reached_at_many("c1", wanted).items():
                    seen[w].add(at)
                for w in wanted[::3]:
                    if (at := store.log_end_reached_at("c1", *w)) is not None:
                        seen[w].add(at)
        except BaseException as exc:  # reported below
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(2)]
    for r in readers:
        r.start()
    for i in range(150):
        parts = tuple(PartitionOffsets("t", p, 0, 3 * i + p) for p in range(4))
        store.record_offsets(OffsetsObservation("c1", T0 + i, parts))
    done.set()
    for r in readers:
        r.join()
    assert failures == []
    final = log_end_reached_at_many(sql, "c1", wanted)
    assert store.log_end_reached_at_many("c1", wanted) == final
    assert {w: ats for w, ats in seen.items() if ats} == {w: {at} for w, at in final.items() if seen[w]}
    assert store.log_end_lookups().memory > 0
