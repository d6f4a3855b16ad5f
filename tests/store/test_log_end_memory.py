"""LogEndMemory on its own: which rows it keeps, and when it answers (store.log_end_memory)."""

from __future__ import annotations

from store.log_end_memory import KEEP, LogEndMemory

K = ("c1", "t", 0)


def memory_of(*rows: tuple[float, int | None], inserted: bool = True) -> LogEndMemory:
    memory = LogEndMemory()
    floors: dict[tuple[str, str, int], float | None] = {} if inserted else {K: rows[0][0]}
    for at, end in rows:
        memory.add([(K, at, end, inserted)], floors)
        floors = {}
    return memory


def test_log_end_memory_new_partition_answers_every_offset() -> None:
    memory = memory_of((10.0, 5), (20.0, 15), (30.0, 25))
    assert memory.reached_at(K, 1, None) == (True, 10.0)
    assert memory.reached_at(K, 6, None) == (True, 20.0)
    assert memory.reached_at(K, 26, None) == (True, None)
    assert memory.reached_at(K, 16, 25.0) == (True, None)  # not by `until`
    assert memory.reached_at(("c2", "t", 0), 1, None) == (False, None)


def test_log_end_memory_existing_partition_answers_only_after_a_kept_pivot() -> None:
    memory = memory_of((10.0, 5), (20.0, 15), inserted=False)
    assert memory.reached_at(K, 6, None) == (True, 20.0)
    assert memory.reached_at(K, 5, None) == (False, None)  # the crossing may lie before the kept rows


def test_log_end_memory_same_instant_replaces_the_kept_row() -> None:
    memory = memory_of((10.0, 5), (20.0, 15))
    memory.add([(K, 20.0, 3, False)], {})
    assert memory.reached_at(K, 4, None) == (True, None)  # the row at 20 now has 3
    memory.add([(K, 20.0, None, False)], {})  # a row without a log end replaced it
    assert memory.reached_at(K, 4, None) == (True, 10.0)


def test_log_end_memory_older_row_goes_in_order() -> None:
    memory = memory_of((10.0, 5), (30.0, 25))
    memory.add([(K, 20.0, 15, False)], {})
    assert memory.reached_at(K, 6, None) == (True, 20.0)


def test_log_end_memory_keeps_the_newest_rows_only() -> None:
    memory = memory_of(*((float(i), i) for i in range(KEEP + 2)))
    assert memory.reached_at(K, 0, None) == (False, None)  # row 0 (and 1) dropped: no longer complete
    assert memory.reached_at(K, 3, None) == (True, 3.0)
    memory.add([(K, 0.5, 7, False)], {})  # before the kept rows: not kept, they stay a suffix
    assert memory.reached_at(K, 3, None) == (True, 3.0)


def test_log_end_memory_trim_drops_rows_thinning_may_delete() -> None:
    memory = memory_of((10.0, 5), (20.0, 15), (30.0, 25))
    memory.trim(20.0)
    assert memory.reached_at(K, 6, None) == (False, None)  # the pivot at 10 may be gone
    assert memory.reached_at(K, 16, None) == (True, 30.0)
    memory.add([(K, 15.0, 1, False)], {})  # older than the trim: not kept
    assert memory.reached_at(K, 2, None) == (False, None)


def test_log_end_memory_forget_and_epochs() -> None:
    memory = memory_of((10.0, 5), (20.0, 15))
    memory.hold(1)
    assert memory.reached_at(K, 6, None) == (True, 20.0)  # the first epoch held keeps the rows
    memory.hold(2)
    assert memory.reached_at(K, 6, None) == (False, None)
    memory = memory_of((10.0, 5), (20.0, 15))
    memory.forget([K])
    assert memory.reached_at(K, 6, None) == (False, None)


def test_log_end_memory_beyond_64_bits_is_left_to_sql() -> None:
    memory = memory_of((10.0, 5))
    memory.add([(K, 20.0, 2**63, False)], {})
    assert memory.reached_at(K, 6, None) == (False, None)
    memory.add([(K, 30.0, 7, False)], {})
    assert memory.reached_at(K, 6, None) == (False, None)
    assert memory_of((10.0, 5)).reached_at(K, 2**63, None) == (False, None)


def test_log_end_memory_many_answers_and_leaves_the_rest() -> None:
    memory = memory_of((10.0, 5), (20.0, 15))
    found, rest = memory.reached_at_many("c1", [("t", 0, 6), ("t", 0, 16), ("t", 1, 1)])
    assert found == {("t", 0, 6): 20.0}
    assert rest == [("t", 1, 1)]
