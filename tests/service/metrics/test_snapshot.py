"""The compact snapshot: a round trip renders the same bytes; observation parts and log-end lookups are
kept while the observation objects stay the latest, and asked again when they change."""

from __future__ import annotations

import dataclasses

from service.metrics import ScrapeInputs, build_registry, render
from service.metrics import snapshot as snap
from service.metrics.expansion import expand
from service.metrics.snapshot import Compactor, compact
from tests.service.metrics import builders as b


def _inputs(store: b.FakeLogEndTimes, cluster: b.ClusterInputs | None = None) -> ScrapeInputs:
    return ScrapeInputs(clusters=[cluster or b.cluster_inputs()], log_end_times=store)


def _body(inputs: ScrapeInputs) -> bytes:
    return render(build_registry(lambda: inputs, clock=lambda: b.NOW), inputs).body


def test_expand_of_compact_renders_the_same_bytes() -> None:
    inputs = _inputs(b.FakeLogEndTimes(b.STORE_TIMES))
    expanded, now = expand(compact(inputs, b.NOW))
    assert now == b.NOW
    assert _body(expanded) == _body(inputs)
    assert b"offsetguard_group_lag_seconds" in _body(expanded)


def test_compactor_reuses_parts_and_lookups_while_observations_are_the_same_objects() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    cluster = b.cluster_inputs()
    compactor = Compactor()
    first = compactor.compact(_inputs(store, cluster), b.NOW)
    second = compactor.compact(_inputs(store, cluster), b.NOW + 5)
    assert compactor.packed == 4  # metadata, offsets, groups, committed: once
    assert len(store.calls) == 1
    assert second[1] == first[1] and second[0] == b.NOW + 5
    assert _body(expand(second)[0]) == _body(expand(compact(_inputs(store, cluster), b.NOW + 5))[0])


def test_compactor_new_committed_observation_is_packed_and_looked_up_again() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    cluster = b.cluster_inputs()
    compactor = Compactor()
    compactor.compact(_inputs(store, cluster), b.NOW)
    assert cluster.committed is not None
    moved = dataclasses.replace(
        cluster.committed,
        offsets=tuple(dataclasses.replace(x, offset=x.offset - 1) for x in cluster.committed.offsets),
    )
    changed = dataclasses.replace(cluster, committed=moved)
    out = compactor.compact(_inputs(store, changed), b.NOW)
    assert compactor.packed == 5  # only the committed part again
    assert len(store.calls) == 2
    assert _body(expand(out)[0]) == _body(_inputs(store, changed))


def _moved_commit(cluster: b.ClusterInputs, index: int, offset: int) -> b.ClusterInputs:
    assert cluster.committed is not None
    offsets = list(cluster.committed.offsets)
    offsets[index] = dataclasses.replace(offsets[index], offset=offset)
    return dataclasses.replace(
        cluster, committed=dataclasses.replace(cluster.committed, offsets=tuple(offsets))
    )


def test_compactor_asks_the_store_only_for_rows_it_has_no_answer_for() -> None:
    store = b.FakeLogEndTimes({**b.STORE_TIMES, ("orders", 1, 46): b.NOW - 10})
    compactor = Compactor()
    cluster = b.cluster_inputs()
    compactor.compact(_inputs(store, cluster), b.NOW)
    assert store.calls == [("c1", {("orders", 0, 91)})]  # the one lagging row
    moved = _moved_commit(cluster, 1, 45)  # billing orders/1: 55 (beyond the end, 50) -> 45: lagging
    out = compactor.compact(_inputs(store, moved), b.NOW + 5)
    assert store.calls[1:] == [("c1", {("orders", 1, 46)})]  # orders/0's answer kept
    assert compactor.asked == 2
    assert _body(expand(out)[0]) == _body(_inputs(b.FakeLogEndTimes(store.reached), moved))
    again = _moved_commit(moved, 2, 99)  # audit orders/0: 100 -> 99, lagging; no answer yet
    compactor.compact(_inputs(store, again), b.NOW + 10)
    assert store.calls[2:] == [("c1", {("orders", 0, 100)})]


def test_compactor_asks_again_for_a_partition_whose_log_end_fell() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    compactor = Compactor()
    cluster = b.cluster_inputs()
    compactor.compact(_inputs(store, cluster), b.NOW)
    assert cluster.offsets is not None
    parts = list(cluster.offsets.partitions)
    parts[0] = dataclasses.replace(parts[0], log_end=95)  # orders/0: 100 -> 95 (still past 91)
    truncated = dataclasses.replace(
        cluster, offsets=dataclasses.replace(cluster.offsets, partitions=tuple(parts))
    )
    store.reached[("orders", 0, 91)] = b.NOW - 2  # the crossing that counts now
    out = compactor.compact(_inputs(store, truncated), b.NOW + 5)
    assert store.calls[1:] == [("c1", {("orders", 0, 91)})]
    assert _body(expand(out)[0]) == _body(_inputs(b.FakeLogEndTimes(store.reached), truncated))
    grown = dataclasses.replace(truncated, committed=_moved_commit(truncated, 1, 55).committed)
    compactor.compact(_inputs(store, grown), b.NOW + 10)  # a new committed observation, ends as before
    assert len(store.calls) == 2  # answered already


def test_compactor_unanswered_lookup_is_asked_again_after_a_while() -> None:
    store = b.FakeLogEndTimes({})  # the store has not recorded the crossing yet
    cluster = b.cluster_inputs()
    clock = [100.0]
    compactor = Compactor(monotonic=lambda: clock[0])
    compactor.compact(_inputs(store, cluster), b.NOW)
    clock[0] += snap.INCOMPLETE_REUSE_S - 0.1
    compactor.compact(_inputs(store, cluster), b.NOW)
    assert len(store.calls) == 1
    store.reached.update(b.STORE_TIMES)
    clock[0] += 0.2
    out = compactor.compact(_inputs(store, cluster), b.NOW)
    assert len(store.calls) == 2
    assert b'offsetguard_group_lag_seconds{cluster="c1"' in _body(expand(out)[0])
    clock[0] += 3600  # answered in full: kept while the observations are the same
    compactor.compact(_inputs(store, cluster), b.NOW)
    assert len(store.calls) == 2


def test_compactor_forgets_a_cluster_that_is_gone() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    compactor = Compactor()
    compactor.compact(_inputs(store), b.NOW)
    out = compactor.compact(ScrapeInputs(log_end_times=store), b.NOW)
    assert out[1] == () and compactor.compact(_inputs(store), b.NOW)[1][0][0] == "c1"
    assert compactor.packed == 8
