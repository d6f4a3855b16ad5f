from concurrent.futures import ThreadPoolExecutor

from alerts import memo


def test_per_cycle_same_objects_computed_once_released_recomputed() -> None:
    calls: list[object] = []

    @memo.per_cycle
    def view(x: object) -> list[object]:
        calls.append(x)
        return [x]

    a, b = object(), object()
    assert view(a) is view(a)  # the same object: one call
    view(b)  # another object replaces the cached one
    view(a)
    memo.release()
    view(a)
    assert calls == [a, b, a, a]


def test_per_cycle_equal_but_distinct_arguments_not_shared() -> None:
    @memo.per_cycle
    def view(x: list[int]) -> int:
        return len(x)

    first, second = [1], [1]
    view(first)
    second.append(2)
    assert view(second) == 2  # identity, not equality: a changed copy is never answered from cache


def test_carry_the_last_result_answers_the_new_arguments_only_if_it_was_for_the_old() -> None:
    calls: list[object] = []

    @memo.per_cycle
    def view(x: object) -> list[object]:
        calls.append(x)
        return [x]

    a, b, c = object(), object(), object()
    first = view(a)
    memo.carry(view, (a,), (b,))
    assert view(b) is first and calls == [a]
    memo.carry(view, (a,), (c,))  # the last result is b's now: nothing carried
    view(c)
    assert calls == [a, c]
    memo.release()


def test_per_object_same_object_computed_once_kept_across_release_one_per_slot() -> None:
    calls: list[object] = []

    @memo.per_object(slot=lambda x: x[0])
    def index(x: tuple[str, object]) -> list[object]:
        calls.append(x)
        return [x]

    a, b, c = ("prod", object()), ("prod", object()), ("test", object())
    first = index(a)
    memo.release()  # the end of a cycle: a view of an observation outliving it stays
    assert index(a) is first
    index(c)  # another slot: a's stays
    assert index(a) is first
    index(b)  # the same slot: b replaces a
    index(a)
    assert calls == [a, c, b, a]


def test_per_object_shared_by_threads() -> None:
    calls: list[object] = []

    @memo.per_object(slot=lambda x: "one")
    def index(x: object) -> list[object]:
        calls.append(x)
        return [x]

    a = object()
    first = index(a)
    with ThreadPoolExecutor(4) as pool:
        assert all(r is first for r in pool.map(index, [a] * 8))
    assert calls == [a]  # not one copy per thread


def test_per_object_equal_but_distinct_arguments_not_shared() -> None:
    @memo.per_object(slot=lambda x: "one")
    def size(x: list[int]) -> int:
        return len(x)

    first, second = [1], [1]
    size(first)
    second.append(2)
    assert size(second) == 2
