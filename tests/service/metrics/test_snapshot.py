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
