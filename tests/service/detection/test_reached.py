from service.detection.reached import ReachedAtCache
from tests.alerts.builders import offsets

T = "orders"


class Store:
    """The store's answers, counted: what the cache must save and never get wrong."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, int, int], float | None] = {}
        self.asked = 0

    def __call__(self, topic: str, partition: int, offset: int) -> float | None:
        self.asked += 1
        return self.answers.get((topic, partition, offset))


def test_reached_at_cache_asks_the_store_once_per_crossing() -> None:
    store = Store()
    store.answers[(T, 0, 101)] = 50.0
    cache = ReachedAtCache(store)
    assert [cache(T, 0, 101) for _ in range(3)] == [50.0, 50.0, 50.0]
    cache.observe(offsets(60, {(T, 0): (0, 150)}))
    assert cache(T, 0, 101) == 50.0
    assert store.asked == 1


def test_reached_at_cache_never_keeps_unknown_answers() -> None:
    store = Store()
    cache = ReachedAtCache(store)
    assert cache(T, 0, 101) is None
    store.answers[(T, 0, 101)] = 70.0  # the log end crossed since
    assert cache(T, 0, 101) == 70.0


def test_reached_at_cache_forgets_a_crossing_the_log_end_fell_below() -> None:
    store = Store()
    store.answers[(T, 0, 101)] = 50.0
    cache = ReachedAtCache(store)
    cache(T, 0, 101)
    cache.observe(offsets(60, {(T, 0): (0, 80)}))  # truncated below 101: the next crossing counts
    store.answers[(T, 0, 101)] = 90.0
    assert cache(T, 0, 101) == 90.0


def test_reached_at_cache_forgets_offsets_nobody_asks_for_any_more() -> None:
    store = Store()
    store.answers[(T, 0, 101)] = 50.0
    cache = ReachedAtCache(store)
    cache(T, 0, 101)
    cache.observe(offsets(60, {(T, 0): (0, 150)}))  # asked since the last observation: kept
    cache.observe(offsets(65, {(T, 0): (0, 150)}))  # not asked since: the group moved on
    cache(T, 0, 101)
    assert store.asked == 2
