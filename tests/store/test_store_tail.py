"""Tail positions of ``__consumer_offsets`` partitions."""

from __future__ import annotations

from store import Store, TailPosition
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def test_tail_position_never_set_is_none(store: Store) -> None:
    assert store.tail_position("c1", 0) is None
    assert store.tail_positions("c1") == ()


def test_set_tail_position_overwrites_per_cluster_and_partition(store: Store) -> None:
    store.set_tail_position("c1", 3, 100, T0)
    store.set_tail_position("c1", 3, 250, T0 + 5)
    store.set_tail_position("c1", 1, 7, T0 + 5)
    store.set_tail_position("c2", 3, 9, T0 + 6)
    assert store.tail_position("c1", 3) == TailPosition("c1", 3, 250, T0 + 5)
    assert store.tail_positions("c1") == (
        TailPosition("c1", 1, 7, T0 + 5),
        TailPosition("c1", 3, 250, T0 + 5),
    )
    assert store.tail_positions("c2") == (TailPosition("c2", 3, 9, T0 + 6),)


def test_set_tail_position_survives_reopen(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.set_tail_position("c1", 0, 42, T0)
    with Store.open(settings) as store:
        assert store.tail_position("c1", 0) == TailPosition("c1", 0, 42, T0)
