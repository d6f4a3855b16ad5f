"""A collector rendering changing inputs through what it kept writes the bytes of a render from scratch."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace

import pytest

from collectors.model import (
    CommittedOffset,
    GroupMember,
    OffsetsObservation,
    PartitionOffsets,
    TopicPartition,
)
from service.metrics import ClusterInputs, Granularity, MetricsOptions, ScrapeInputs, build_registry, render
from service.metrics.view import ViewMemo, lag_rows
from tests.service.metrics import builders as b

OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def _moved(
    c: ClusterInputs, step: float, log_end: dict[tuple[str, int], int], commits: dict
) -> ClusterInputs:
    """``c`` one collector cycle later: new observation objects, these log ends and commits changed."""
    assert c.offsets is not None and c.committed is not None and c.metadata is not None
    parts = tuple(
        replace(p, log_end=log_end.get((p.topic, p.partition), p.log_end)) for p in c.offsets.partitions
    )
    offsets = OffsetsObservation(c.cluster, c.offsets.observed_at + step, parts)
    committed = replace(
        c.committed,
        observed_at=c.committed.observed_at + step,
        offsets=tuple(
            replace(o, offset=commits.get((o.group, o.topic, o.partition), o.offset))
            for o in c.committed.offsets
        ),
    )
    metadata = replace(c.metadata, observed_at=c.metadata.observed_at + step)
    return replace(c, metadata=metadata, offsets=offsets, committed=committed)


def _with(
    c: ClusterInputs, *, partitions: tuple = (), commits: tuple = (), drop: str | None = None
) -> ClusterInputs:
    """``c`` with partitions and commits added, and ``drop``'s commits removed (new objects)."""
    assert c.offsets is not None and c.committed is not None
    kept = tuple(o for o in c.committed.offsets if o.group != drop)
    committed = replace(c.committed, offsets=kept + commits)
    offsets = replace(c.offsets, partitions=c.offsets.partitions + partitions)
    return replace(c, offsets=offsets, committed=committed)


class _Store:
    """Crossing times per cluster, literally; records what it was asked."""

    def __init__(self, reached: dict[str, dict[tuple[str, int, int], float]]) -> None:
        self.reached = reached
        self.calls: list[tuple[str, set[tuple[str, int, int]]]] = []

    def log_end_reached_at_many(self, cluster: str, wanted: Iterable[tuple[str, int, int]]) -> dict:
        asked = set(wanted)
        self.calls.append((cluster, asked))
        return {k: v for k, v in self.reached.get(cluster, {}).items() if k in asked}


Learned = dict[str, dict[tuple[str, int, int], float]]  # crossings the store learns before a scrape
Step = tuple[list[ClusterInputs], float, Learned]


def _sequence() -> list[Step]:
    """(clusters, now, what the store learned just before) of successive scrapes."""
    one = b.cluster_inputs()
    two = replace(one, cluster='c"2')
    steps: list[Step] = [([one, two], b.NOW, {one.cluster: b.STORE_TIMES, two.cluster: b.STORE_TIMES})]
    steps.append(([one, two], b.NOW + 15, {}))  # the very same objects, later: lag seconds move
    one = _moved(one, 5, {("orders", 0): 100}, {})  # new objects, same values
    steps.append(([one, two], b.NOW + 30, {}))
    one = _moved(one, 5, {("orders", 0): 130, ("orders", 1): 60}, {("billing", "orders", 0): 95})
    steps.append(([one, two], b.NOW + 45, {}))  # the store does not know billing's crossing yet
    one = _moved(one, 5, {}, {("audit", "orders", 0): 120})
    steps.append(([one, two], b.NOW + 60, {one.cluster: {("orders", 0, 96): b.NOW + 20}}))  # now it does
    added = (PartitionOffsets("new", 0, 0, 40, leader=2, leader_epoch=1),)
    commits = (CommittedOffset("late", "new", 0, 10, None), CommittedOffset("late", "orders", 1, 7, None))
    one = _with(one, partitions=added, commits=commits)  # series added
    steps.append(([one, two], b.NOW + 75, {}))
    member = GroupMember("m2", "c-2", "/10.0.0.2", assignment=(TopicPartition("orders", 0),))
    billing = replace(one.groups.groups[0], members=(member,))  # type: ignore[union-attr]
    groups = replace(one.groups, groups=(billing, *one.groups.groups[1:]))  # type: ignore[union-attr]
    one = replace(one, groups=groups)  # a partition handed to another member (kafka-lag-exporter's labels)
    steps.append(([one, two], b.NOW + 80, {}))
    one = _with(one, drop="billing")  # series removed
    steps.append(([one, two], b.NOW + 90, {}))
    # a leader epoch moved in metadata only (a new topics tuple), the offsets observation the same object
    topics = tuple(
        replace(t, partitions=tuple(replace(p, leader_epoch=p.leader_epoch + 1) for p in t.partitions))
        if t.name == "orders"
        else t
        for t in one.metadata.topics  # type: ignore[union-attr]
    )
    one = replace(one, metadata=replace(one.metadata, topics=topics))
    steps.append(([one, two], b.NOW + 95, {}))
    steps.append(([two], b.NOW + 105, {}))  # a cluster gone
    # a truncation under a known crossing (still lagging): the crossing that counts is a later one
    two = _moved(two, 5, {("orders", 0): 95}, {})
    steps.append(([two, one], b.NOW + 120, {two.cluster: {("orders", 0, 91): b.NOW + 110}}))
    metadata = replace(two.metadata, topics=two.metadata.topics[:1])  # type: ignore[union-attr]
    two = replace(two, metadata=metadata)
    steps.append(([two, one], b.NOW + 135, {}))
    steps.append(([replace(two, offsets=None), one], b.NOW + 150, {}))  # an observation gone
    steps.append(([replace(two, committed=None), one], b.NOW + 165, {}))
    return steps


@pytest.mark.parametrize("granularity", ["partition", "topic", "group"])
@pytest.mark.parametrize("accept", [None, OPENMETRICS])
def test_by_change_every_render_the_bytes_of_a_render_from_scratch(
    granularity: Granularity, accept: str | None
) -> None:
    store = _Store({})
    steps = _sequence()
    at: dict[str, object] = {}

    def scrape() -> ScrapeInputs:
        return ScrapeInputs(clusters=at["clusters"], log_end_times=store)  # type: ignore[arg-type]

    def clock() -> float:
        return at["now"]  # type: ignore[return-value]

    options = MetricsOptions(granularity=granularity)
    kept = build_registry(scrape, clock=clock, options=options)
    bodies = set()
    for clusters, now, learned in steps:
        at["clusters"], at["now"] = clusters, now
        for cluster, reached in learned.items():
            store.reached.setdefault(cluster, {}).update(reached)
        expected = render(build_registry(scrape, clock=clock, options=options), accept=accept).body
        assert render(kept, accept=accept).body == expected, (clusters, now)
        bodies.add(expected)
    assert len(bodies) == len(steps)  # every step changed the picture


def test_by_change_store_asked_only_for_crossings_it_did_not_answer() -> None:
    store = b.FakeLogEndTimes({**b.STORE_TIMES, ("orders", 0, 96): b.NOW - 5})
    c = b.cluster_inputs()
    registry = build_registry(lambda: ScrapeInputs(clusters=[c], log_end_times=store), clock=lambda: b.NOW)
    render(registry)
    render(registry)  # the same observations: nothing asked
    c = _moved(c, 5, {("orders", 0): 110}, {("audit", "orders", 0): 105})  # audit lags now, billing as before
    render(registry)
    c = _moved(c, 5, {}, {("billing", "orders", 0): 95})
    render(registry)
    assert store.calls == [
        ("c1", {("orders", 0, 91)}),
        ("c1", {("orders", 0, 106)}),  # billing's crossing known; audit's new
        ("c1", {("orders", 0, 96), ("orders", 0, 106)}),  # audit's unknown one asked again
    ]


def test_view_memo_unknown_crossing_asked_again_after_a_while_known_one_never() -> None:
    store = b.FakeLogEndTimes({})
    clock = [0.0]
    kept = ViewMemo(monotonic=lambda: clock[0])
    c = b.cluster_inputs()
    assert kept.lags_and_reached(c, store)[1] == {}
    assert kept.lags_and_reached(c, store)[1] == {}  # within the while: not asked again
    store.reached[("orders", 0, 91)] = b.NOW - 30
    clock[0] = 5.0
    assert kept.lags_and_reached(c, store)[1] == {("orders", 0, 91): b.NOW - 30}
    clock[0] = 1000.0
    assert kept.lags_and_reached(c, store)[1] == {("orders", 0, 91): b.NOW - 30}
    assert store.calls == [("c1", {("orders", 0, 91)})] * 2


def test_by_change_store_error_no_lag_seconds_that_render_known_ones_kept() -> None:
    from collectors.errors import StoreError

    class Failing(b.FakeLogEndTimes):
        fail = False

        def log_end_reached_at_many(self, cluster, wanted):  # type: ignore[no-untyped-def]
            if self.fail:
                raise StoreError("locked")
            return super().log_end_reached_at_many(cluster, wanted)

    store = Failing(b.STORE_TIMES)
    c = b.cluster_inputs()
    registry = build_registry(lambda: ScrapeInputs(clusters=[c], log_end_times=store), clock=lambda: b.NOW)
    assert b"offsetguard_group_lag_seconds{" in render(registry).body
    store.fail = True
    c = _moved(c, 5, {}, {("audit", "orders", 0): 99})  # a crossing to ask about
    assert b"offsetguard_group_lag_seconds{" not in render(registry).body  # as a render from scratch
    store.fail = False
    c = _moved(c, 5, {}, {})
    body = render(registry).body
    assert (
        b'offsetguard_group_lag_seconds{cluster="c1",group="billing",partition="0",topic="orders"} 30.0'
        in body
    )
    assert [asked for _, asked in store.calls] == [{("orders", 0, 91)}, {("orders", 0, 100)}]


def test_by_change_concurrent_render_from_scratch_same_bytes() -> None:
    c = b.cluster_inputs()
    registry = build_registry(lambda: ScrapeInputs(clusters=[c]), clock=lambda: b.NOW)
    families = registry.collect()  # a render under way holds what the collector keeps
    first = next(iter(families))
    assert (
        render(registry).body
        == render(build_registry(lambda: ScrapeInputs(clusters=[c]), clock=lambda: b.NOW)).body
    )
    assert first.name == "offsetguard_group_lag_messages"


def test_view_memo_new_observations_same_offsets_reuse_rows_a_moved_one_derives_again() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    kept = ViewMemo(monotonic=lambda: 0.0)
    c = b.cluster_inputs()
    assert c.offsets is not None and c.committed is not None
    lags = kept.lags_and_reached(c, store)[0]
    # the next cycle as the tail-fed committed offsets and the offsets collector hand it when nothing
    # moved: new observations, the same offsets tuple and the same partition objects
    same = replace(
        c,
        offsets=OffsetsObservation(c.cluster, c.offsets.observed_at + 5, tuple(c.offsets.partitions)),
        committed=replace(c.committed, observed_at=c.committed.observed_at + 5),
    )
    assert kept.lags_and_reached(same, store)[0] is lags
    moved = _moved(same, 5, {}, {("billing", "orders", 0): 95})
    again = kept.lags_and_reached(moved, store)[0]
    assert again is not lags
    assert again == sorted(lag_rows(moved.committed, moved.offsets)) and again != lags
    log_end = _moved(moved, 5, {("orders", 0): 130}, {})  # equal commits, a new offsets tuple
    assert kept.lags_and_reached(log_end, store)[0] == sorted(lag_rows(log_end.committed, log_end.offsets))


def _sorted_inputs(rng: random.Random) -> ClusterInputs:
    """Committed offsets listed sorted and unique, as the tail-fed view lists them; a log end for most."""
    c = b.cluster_inputs()
    assert c.committed is not None
    tps = [(t, p) for t in ("a", "b", "c") for p in range(4)]
    parts = tuple(PartitionOffsets(t, p, 0, 100, leader=1, leader_epoch=1) for t, p in tps[:-1])
    commits = tuple(
        CommittedOffset(g, t, p, rng.randrange(90, 101), None) for g in ("g1", "g2", "g3") for t, p in tps
    )
    offsets = OffsetsObservation(c.cluster, b.NOW, parts)
    return replace(c, offsets=offsets, committed=replace(c.committed, offsets=commits))


def _step(c: ClusterInputs, rng: random.Random) -> tuple[ClusterInputs, set[tuple[str, int]], set]:
    """``c`` one cycle later as the collectors hand it: new observations holding the very objects of
    what did not move; a few log ends moved (up, or down: a truncation), a partition's log range gone or
    back now and then, a few commits moved. The partitions and the commits that moved."""
    assert c.offsets is not None and c.committed is not None
    parts = list(c.offsets.partitions)
    moved = set()
    for i in rng.sample(range(len(parts)), rng.randrange(3)):
        parts[i] = replace(parts[i], log_end=rng.choice([parts[i].log_end + 3, 95, 80]))
        moved.add((parts[i].topic, parts[i].partition))
    if rng.random() < 0.15:
        if len(parts) == 11:
            parts.append(PartitionOffsets("c", 3, 0, 99))
        else:
            parts.pop()
        moved.add(("c", 3))
    commits = list(c.committed.offsets)
    for i in rng.sample(range(len(commits)), 3):
        commits[i] = replace(commits[i], offset=commits[i].offset + 1)
    changed = {(o.group, o.topic, o.partition) for o in c.committed.offsets if o not in commits}
    offsets = OffsetsObservation(c.cluster, c.offsets.observed_at + 5, tuple(parts))
    committed = replace(c.committed, observed_at=c.committed.observed_at + 5, offsets=tuple(commits))
    return replace(c, offsets=offsets, committed=committed), moved, changed


def test_view_memo_sorted_offsets_only_moved_rows_derived_again_same_as_from_scratch() -> None:
    rng = random.Random(47)
    store = b.FakeLogEndTimes({(t, p, o): b.NOW - o for t in "abc" for p in range(4) for o in range(80, 110)})
    kept = ViewMemo(monotonic=lambda: 0.0)
    c = _sorted_inputs(rng)
    lags = kept.lags_and_reached(c, store)[0]
    for _ in range(40):
        c, parts, commits = _step(c, rng)
        again, reached = kept.lags_and_reached(c, store)
        assert again == sorted(lag_rows(c.committed, c.offsets))
        assert reached == ViewMemo().lags_and_reached(c, store)[1]
        kept_rows = [
            new is old
            for new, old in zip(again, lags, strict=True)
            if new[0] not in commits and new[0][1:] not in parts
        ]
        assert kept_rows and all(kept_rows)  # the rows that did not move are the held tuples
        lags = again
