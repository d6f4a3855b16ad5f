"""The committed history's newest rows kept apart and merged about once a minute: reads see one history."""

from __future__ import annotations

import pytest

import store.recent as recent
from collectors.model import CommittedObservation, CommittedOffset
from store import Store
from store.db import Connection, connect_to
from store.settings import StoreSettings

T0 = 1_700_000_000.0


@pytest.fixture(autouse=True)
def keep_every_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small writes are kept too (by default only writes of many rows are, or while some are kept)."""
    monkeypatch.setattr(recent, "KEEP_FROM", 1)


def commit(store: Store, at: float, offset: int, partitions: int = 1, group: str = "g") -> None:
    offsets = tuple(CommittedOffset(group, "t", p, offset, 1) for p in range(partitions))
    store.record_committed(CommittedObservation("c1", at, offsets, (group,)))


def kept(raw: Connection) -> tuple[int, int]:
    """(rows in committed_recent, rows in committed_history)."""
    return tuple(  # type: ignore[return-value]
        raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("committed_recent", "committed_history")
    )


def history(store: Store) -> list[tuple[float, int | None]]:
    return [(p.observed_at, p.offset) for p in store.committed_history("c1", "g")]


def test_recent_rows_merge_once_a_minute_of_observed_time_has_passed(store: Store, raw: Connection) -> None:
    commit(store, T0, 1, partitions=2)
    commit(store, T0 + 30, 2, partitions=2)
    commit(store, T0 + 59.9, 3, partitions=2)
    assert kept(raw) == (6, 0)
    commit(store, T0 + 60, 4, partitions=2)  # a minute after the first row kept: merged, then kept anew
    assert kept(raw) == (2, 6)
    assert history(store) == [(T0, 1), (T0 + 30, 2), (T0 + 59.9, 3), (T0 + 60, 4)] * 2  # by partition
    assert [(p.partition, p.offset) for p in store.committed_at("c1", "g", T0 + 59.95)] == [(0, 3), (1, 3)]


def test_recent_merge_due_with_nothing_new_to_write(store: Store, raw: Connection) -> None:
    commit(store, T0, 1)
    commit(store, T0 + 120, 1)  # unchanged: no row, but the one kept is due
    assert kept(raw) == (0, 1)


def test_recent_row_of_an_instant_already_merged_replaces_it(store: Store, raw: Connection) -> None:
    commit(store, T0, 10)
    commit(store, T0 + 70, 11)  # merges T0's row
    commit(store, T0, 9)  # the clock went back: merges T0 + 70's row, keeps T0's anew
    assert kept(raw) == (1, 2)
    assert history(store) == [(T0, 9), (T0 + 70, 11)]  # one row an instant: the later write's
    assert [p.offset for p in store.committed_at("c1", "g", T0 + 1)] == [9]  # the recent row wins a tie
    assert [p.offset for p in store.committed_at("c1", "g", T0 + 70)] == [11]  # the merged one is newer
    assert [p.offset for p in store.committed_history("c1", "g", since=T0, until=T0)] == [9]


def test_recent_rows_merged_at_close(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        commit(store, T0, 1)
        commit(store, T0 + 5, 2)
    raw = connect_to(settings)
    try:
        assert kept(raw) == (0, 2)
    finally:
        raw.close()
    with Store.open(settings) as store:
        assert history(store) == [(T0, 1), (T0 + 5, 2)]


def test_recent_rows_merge_once_there_are_many(
    store: Store, raw: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recent, "MERGE_ROWS", 4)
    commit(store, T0, 1, partitions=3)
    commit(store, T0 + 1, 2, partitions=3)
    assert kept(raw) == (6, 0)
    commit(store, T0 + 2, 3, partitions=3)
    assert kept(raw) == (3, 6)


def test_recent_rows_go_with_their_deleted_key(store: Store, raw: Connection) -> None:
    commit(store, T0, 1)
    raw.execute("BEGIN")
    raw.execute("DELETE FROM latest_committed")  # as an operator's SQL would
    raw.execute("COMMIT")
    assert kept(raw) == (0, 0)


def test_recent_small_writes_go_straight_to_the_history_while_none_are_kept(
    store: Store, raw: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recent, "KEEP_FROM", 3)
    commit(store, T0, 1, partitions=2)
    assert kept(raw) == (0, 2)
    commit(store, T0 + 5, 2, partitions=4)  # many: kept
    commit(store, T0 + 10, 1, group="h")  # few, but some are kept: kept with them
    assert kept(raw) == (5, 2)
    commit(store, T0 + 65, 9, group="h")  # the kept ones are due: merged, and this one goes straight
    assert kept(raw) == (0, 8)
    assert [p.offset for p in store.committed_history("c1", "g", partition=0)] == [1, 2]
    assert [p.offset for p in store.committed_history("c1", "h")] == [1, 9]


def test_recent_rows_left_by_another_process_merge_at_the_first_write(
    settings: StoreSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recent, "KEEP_FROM", 2)
    with Store.open(settings) as store:
        commit(store, T0, 1)
    raw = connect_to(settings)
    try:  # as if the process had died before its close merged them
        raw.execute("BEGIN")
        raw.execute(
            "INSERT INTO committed_recent SELECT key_id, ?, 7, 1, '' FROM committed_history", (T0 + 1,)
        )
        raw.execute("COMMIT")
    finally:
        raw.close()
    with Store.open(settings) as store:
        assert [p.offset for p in store.committed_history("c1", "g")] == [1, 7]
        commit(store, T0 + 1, 8)  # straight to the history: only right once the older row kept is merged
        assert [p.offset for p in store.committed_history("c1", "g")] == [1, 8]
