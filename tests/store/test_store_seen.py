"""``last_seen_at``: kept in memory between changes, written when a row stops being listed and at close.

Every read gives what a per-row touch of every observation would have written; the database holds it once
the row is no longer listed, or after the store is closed (reopened here to read the file itself).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from collectors.model import (
    CommittedObservation,
    CommittedOffset,
    Failure,
    OffsetsObservation,
    PartitionOffsets,
)
from store import Store
from store.db import connect_to
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def offsets(at: float, *partitions: int) -> OffsetsObservation:
    return OffsetsObservation("c1", at, tuple(PartitionOffsets("t", p, 0, 100) for p in partitions))


def committed(at: float, groups: tuple[str, ...], *rows: tuple[str, str]) -> CommittedObservation:
    return CommittedObservation("c1", at, tuple(CommittedOffset(g, t, 0, 10, None) for g, t in rows), groups)


def stored(settings: StoreSettings, sql: str) -> list[tuple[object, ...]]:
    with contextlib.closing(connect_to(settings)) as conn:
        return [tuple(row) for row in conn.execute(sql)]


def partitions_seen(store: Store) -> dict[int, float]:
    return {p.partition: p.last_seen_at for p in store.latest_partitions("c1")}


def test_unchanged_partitions_are_not_rewritten_yet_read_as_seen(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.record_offsets(offsets(T0, 0, 1))
        for i in range(1, 4):
            store.record_offsets(offsets(T0 + 5 * i, 0, 1))
        assert partitions_seen(store) == {0: T0 + 15, 1: T0 + 15}
        # the file still says when each row was written: nothing was rewritten for an unchanged partition
        assert stored(settings, "SELECT partition, last_seen_at FROM latest_partition_offsets") == [
            (0, T0),
            (1, T0),
        ]
    with Store.open(settings) as reopened:  # close wrote what was only remembered
        assert partitions_seen(reopened) == {0: T0 + 15, 1: T0 + 15}


def test_a_partition_no_longer_listed_keeps_when_it_was_last_seen(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.record_offsets(offsets(T0, 0, 1))
        store.record_offsets(offsets(T0 + 5, 0, 1))
        store.record_offsets(offsets(T0 + 10, 0))  # partition 1 not answered
        store.record_offsets(offsets(T0 + 15, 0))
        assert partitions_seen(store) == {0: T0 + 15, 1: T0 + 5}
        rows = stored(settings, "SELECT partition, last_seen_at FROM latest_partition_offsets ORDER BY 1")
        assert rows == [(0, T0), (1, T0 + 5)]  # written when it dropped out, not at close
        store.record_offsets(offsets(T0 + 20, 0, 1))  # back
        assert partitions_seen(store) == {0: T0 + 20, 1: T0 + 20}


def test_an_older_observation_does_not_move_last_seen_back(store: Store) -> None:
    store.record_offsets(offsets(T0 + 10, 0))
    store.record_offsets(offsets(T0, 0))
    assert partitions_seen(store) == {0: T0 + 10}


def test_committed_last_seen_follows_the_groups_each_poll_fetched(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.record_committed(committed(T0, ("a", "b"), ("a", "t"), ("b", "t")))
        store.record_committed(committed(T0 + 5, ("a", "b"), ("a", "t"), ("b", "t")))
        store.record_committed(committed(T0 + 10, ("a",), ("a", "t")))  # b failed: not fetched
        store.record_committed(committed(T0 + 15, ("a",), ("a", "t")))
        assert [r.last_seen_at for r in store.latest_committed("c1", "a")] == [T0 + 15]
        assert [r.last_seen_at for r in store.latest_committed("c1", "b")] == [T0 + 5]
        rows = stored(settings, "SELECT grp, last_seen_at FROM latest_committed ORDER BY 1")
        assert rows == [("a", T0), ("b", T0 + 5)]
    with Store.open(settings) as reopened:
        assert [r.last_seen_at for r in reopened.latest_committed("c1", "a")] == [T0 + 15]


def test_committed_rows_of_a_topic_the_poll_cannot_see_stop_being_confirmed(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.record_committed(committed(T0, ("g",), ("g", "t"), ("g", "secret")))
        hidden = Failure("topic", "secret", "KafkaAuthError", "committed offsets not seen: not authorized")
        for i in (1, 2):
            store.record_committed(replace(committed(T0 + 5 * i, ("g",), ("g", "t")), failures=(hidden,)))
        seen = {r.topic: r.last_seen_at for r in store.latest_committed("c1", "g")}
        assert seen == {"t": T0 + 10, "secret": T0}
        store.record_committed(committed(T0 + 15, ("g",), ("g", "t"), ("g", "secret")))  # visible again
        seen = {r.topic: r.last_seen_at for r in store.latest_committed("c1", "g")}
        assert seen == {"t": T0 + 15, "secret": T0 + 15}
    with Store.open(settings) as reopened:
        seen = {r.topic: r.last_seen_at for r in reopened.latest_committed("c1", "g")}
        assert seen == {"t": T0 + 15, "secret": T0 + 15}


def test_partitions_after_reopen_compared_with_stored_rows_and_new_ones_keyed_after_them(
    settings: StoreSettings,
) -> None:
    with Store.open(settings) as store:
        store.record_offsets(offsets(T0, 0, 1))
    with Store.open(settings) as store:
        store.record_offsets(offsets(T0 + 5, 0, 1, 2))  # 0 and 1 unchanged: not rewritten; 2 is new
    rows = stored(settings, "SELECT id, partition, last_seen_at FROM latest_partition_offsets ORDER BY 1")
    assert rows == [(1, 0, T0 + 5), (2, 1, T0 + 5), (3, 2, T0 + 5)]
