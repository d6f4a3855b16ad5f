from collections.abc import Set as AbstractSet

from collectors.errors import StoreError
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


class Many:
    """The store's batched lookup over the same answers, counted."""

    def __init__(self, store: Store, fail: Exception | None = None) -> None:
        self.store, self.fail = store, fail
        self.batches: list[set[tuple[str, int, int]]] = []

    def __call__(self, wanted: AbstractSet[tuple[str, int, int]]) -> dict[tuple[str, int, int], float]:
        self.batches.append(set(wanted))
        if self.fail is not None:
            raise self.fail
        return {k: at for k in wanted if (at := self.store.answers.get(k)) is not None}


def test_reached_at_cache_asks_the_unanswered_again_in_one_batch_per_observation() -> None:
    store = Store()
    many = Many(store)
    cache = ReachedAtCache(store, many)
    assert cache(T, 0, 101) is None and cache(T, 1, 11) is None and cache(T, 2, 7) is None
    assert store.asked == 3
    store.answers[(T, 1, 11)] = 40.0  # the store learns one crossing
    cache.observe(offsets(60, {(T, 0): (0, 150), (T, 1): (0, 20), (T, 2): (0, 5)}))
    assert many.batches == [{(T, 0, 101), (T, 1, 11)}]  # T/2 fell below 7: not asked again
    assert cache(T, 1, 11) == 40.0 and cache(T, 0, 101) is None
    assert store.asked == 3  # both from the batch, none one by one
    assert cache(T, 2, 7) is None and store.asked == 4  # not in the batch: asked on its own
    store.answers[(T, 0, 101)] = 55.0
    cache.observe(offsets(65, {(T, 0): (0, 150), (T, 1): (0, 20), (T, 2): (0, 9)}))
    assert many.batches[-1] == {(T, 0, 101), (T, 2, 7)}  # the unanswered of the last evaluation only
    assert cache(T, 0, 101) == 55.0 and cache.batched == 4


def test_reached_at_cache_batch_failure_asks_each_on_its_own_as_before() -> None:
    store = Store()
    cache = ReachedAtCache(store, Many(store, fail=StoreError("disk gone", cluster="c")))
    assert cache(T, 0, 101) is None
    cache.observe(offsets(60, {(T, 0): (0, 150)}))  # logged, not raised
    store.answers[(T, 0, 101)] = 50.0
    assert cache(T, 0, 101) == 50.0 and store.asked == 2
