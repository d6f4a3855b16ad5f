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
