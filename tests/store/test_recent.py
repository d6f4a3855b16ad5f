"""The histories' newest rows kept apart and merged about once a minute: reads see one history."""

from __future__ import annotations

import pytest

import store.queries as queries
import store.recent as recent
from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets
from store import Store
from store.db import Connection, connect_to
from store.log_end_times import log_end_reached_at_many
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


def steps() -> list[tuple[float, int]]:
    """(observed at, log end): a log growing, the same instant written twice, a clock gone back (to a new
    instant, and to one written already), a truncation."""
    out = [(T0 + 5 * k, 100 + 10 * k) for k in range(30)]
    out.insert(10, (T0 + 45, 185))  # T0 + 45 again: replaces the row written just before
    out.insert(21, (T0 + 52, 175))  # back in time, between two rows
    out.insert(22, (T0 + 20, 170))  # back to an instant written (and merged) long before
    out[28:28] = [(T0 + 131, 60), (T0 + 136, 70)]  # truncated below what was read
    out.append((T0 + 140, 75))  # back to an instant kept: replaces it
    out.append((T0 + 100, 80))  # back to a merged instant: kept, beside the row it replaces
    out.append((T0 - 100, 40))  # before everything: merges every row kept
    out.append((T0 + 145, 395))  # the newest instant, merged, again (higher): kept beside it
    return out


def reads(conn: Connection) -> dict[str, object]:
    """Every history read of the store's SQL (the log-end memory aside), over both tables."""
    probes = [T0 - 5 + 2.5 * k for k in range(70)]
    wanted = [("t", p, end) for p in (0, 1) for end in range(50, 420, 15)]
    return {
        "partition_history": queries.partition_history(conn, "c1", "t", None, None, None),
        "partition_at": [queries.partition_at(conn, "c1", "t", 1, at) for at in probes],
        "reached": [
            queries.log_end_reached_at(conn, "c1", t, p, end, until)
            for t, p, end in wanted
            for until in (None, T0 + 52, T0 + 133)
        ],
        "reached_many": log_end_reached_at_many(conn, "c1", wanted),
        "range_samples": queries.range_samples(conn, "c1", None, None),
        "committed_history": queries.committed_history(conn, "c1", "g", None, None, None, None),
        "committed_at": [queries.committed_at(conn, "c1", "g", at) for at in probes],
    }


def test_recent_and_merged_rows_read_as_the_history_alone(
    settings: StoreSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recent, "MERGE_AFTER", 25.0)
    with Store.open(settings) as store:
        for at, end in steps():
            parts = tuple(PartitionOffsets("t", p, 0, end + p, 1, 7) for p in (0, 1))
            store.record_offsets(OffsetsObservation("c1", at, parts))
            commit(store, at, end - 20, partitions=2)
        raw = connect_to(settings)
        try:
            counts = [
                raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("partition_offsets_recent", "partition_offsets_history")
            ]
            assert min(counts) > 0 and min(kept(raw)) > 0  # some rows kept, some merged, of both histories
            split = reads(raw)
        finally:
            raw.close()
    raw = connect_to(settings)  # closed: every row merged, the history alone
    try:
        assert kept(raw)[0] == 0
        assert raw.execute("SELECT count(*) FROM partition_offsets_recent").fetchone()[0] == 0
        merged = reads(raw)
    finally:
        raw.close()
    assert split == merged
    assert [p.log_end for p in merged["partition_history"] if p.observed_at == T0 + 20] == [170, 171]
    assert [p.log_end for p in merged["partition_history"] if p.observed_at == T0 + 45] == [185, 186]
    assert [p.log_end for p in merged["partition_history"] if p.observed_at == T0 + 140] == [75, 76]
    assert [p.log_end for p in merged["partition_history"] if p.observed_at == T0 + 100] == [80, 81]
    assert merged["reached_many"][("t", 0, 395)] == T0 + 145  # not (T0 + 145, 390)'s "still below"
