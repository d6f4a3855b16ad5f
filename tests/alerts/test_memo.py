from concurrent.futures import ThreadPoolExecutor

from alerts import memo


def test_per_object_same_object_computed_once_kept_across_evaluations_one_per_slot() -> None:
    calls: list[object] = []

    @memo.per_object(slot=lambda x: x[0])
    def index(x: tuple[str, object]) -> list[object]:
        calls.append(x)
        return [x]

    a, b, c = ("prod", object()), ("prod", object()), ("test", object())
    first = index(a)
    assert index(a) is first  # the next evaluation: a view of an observation outliving one stays
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


def test_per_object_by_a_part_computed_once_while_that_part_is_the_same_object() -> None:
    """``by``: the part of the argument the function reads (a metadata observation's topics): a new
    argument holding the very same part is answered from the last computation; another part computes."""
    calls = []

    @memo.per_object(slot=lambda x: x[0], by=lambda x: x[1])
    def count(x: tuple[str, list[int]]) -> int:
        calls.append(x)
        return len(x[1])

    part = [1, 2]
    assert count(("a", part)) == 2
    assert count(("a", part)) == 2  # another tuple, the same part
    assert len(calls) == 1
    assert count(("a", [1, 2])) == 2  # an equal part, another object
    assert len(calls) == 2
