"""The store's batched log-end crossing lookup agrees with the per-partition one on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.model import OffsetsObservation, PartitionOffsets
from store import Store
from store.settings import StoreSettings


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _observe(store: Store, at: float, ends: dict[tuple[str, int], int], cluster: str = "c1") -> None:
    parts = tuple(PartitionOffsets(t, p, 0, end) for (t, p), end in ends.items())
    store.record_offsets(OffsetsObservation(cluster, at, parts))


def test_log_end_reached_at_many_matches_single_lookups(store: Store) -> None:
    # orders/0 grows 0 -> 10 -> 20 -> 30; orders/1 grows to 50 then is truncated to 5 and grows to 40
    _observe(store, 100.0, {("orders", 0): 0, ("orders", 1): 20})
    _observe(store, 110.0, {("orders", 0): 10, ("orders", 1): 50})
    _observe(store, 120.0, {("orders", 0): 20, ("orders", 1): 5})
    _observe(store, 130.0, {("orders", 0): 30, ("orders", 1): 40})
    _observe(store, 110.0, {("orders", 0): 99}, cluster="other")  # another cluster is never mixed in
    wanted = [
        ("orders", 0, 1),
        ("orders", 0, 10),
        ("orders", 0, 11),
        ("orders", 0, 31),  # not reached yet
        ("orders", 1, 21),  # reached at 110, then truncated below: the current run reached it at 130
        ("orders", 1, 3),  # above the truncation point all along
        ("missing", 0, 1),  # no history at all
    ]
    batched = store.log_end_reached_at_many("c1", wanted)
    single = {w: store.log_end_reached_at("c1", *w) for w in wanted}
    assert batched == {w: at for w, at in single.items() if at is not None}
    assert batched == {
        ("orders", 0, 1): 110.0,
        ("orders", 0, 10): 110.0,
        ("orders", 0, 11): 120.0,
        ("orders", 1, 21): 130.0,
        ("orders", 1, 3): 100.0,
    }


def test_log_end_reached_at_many_nothing_wanted_empty(store: Store) -> None:
    assert store.log_end_reached_at_many("c1", []) == {}


def test_log_end_reached_at_many_exact_times_and_large_offsets(store: Store) -> None:
    """Answers travel as one JSON text: epoch times keep every bit (JSON's 15 digits would round them)."""
    times = [1795746925.4479017, 1795746930.1234567, 1795746935.9999999]
    big = 2**62
    _observe(store, times[0], {("t.a-b_c", 0): 10, ("t.a-b_c", 1): big - 1})
    _observe(store, times[1], {("t.a-b_c", 0): 20, ("t.a-b_c", 1): big})
    _observe(store, times[2], {("t.a-b_c", 0): 30, ("t.a-b_c", 1): big + 5})
    wanted = [("t.a-b_c", 0, 11), ("t.a-b_c", 0, 25), ("t.a-b_c", 1, big)]
    batched = store.log_end_reached_at_many("c1", wanted)
    assert batched == {
        ("t.a-b_c", 0, 11): times[1],
        ("t.a-b_c", 0, 25): times[2],
        ("t.a-b_c", 1, big): times[1],
    }
    assert batched == {w: store.log_end_reached_at("c1", *w) for w in wanted}
