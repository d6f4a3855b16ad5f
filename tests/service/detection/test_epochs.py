"""Which committed offsets detection asks OffsetsForLeaderEpoch about, the cache and failure handling."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.model import EPOCH_DIVERGENCE, EpochEnd
from alerts.state import CommitKey, CommitPoint
from collectors.errors import KafkaUnavailableError
from collectors.model import CommittedObservation, CommittedOffset, TopicPartition
from collectors.seam import EpochEndResult
from service.detection.epochs import RETRY_SECONDS, EpochEnds
from service.detection.loop import DetectionLoop
from service.settings import DetectionSettings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.alerts import builders as b
from tests.collectors.fakes import FakeSeam, metadata, partition

T = "t"


def _point(offset: int, epoch: int | None) -> CommitPoint:
    return CommitPoint(offset, epoch, at=1.0, moved_at=1.0, source="poll")


META = metadata(
    [1, 2],
    {T: [partition(T, 0, leader=1, epoch=5), partition(T, 1, leader=2, epoch=3), partition(T, 2, None, 9)]},
)
TP0, TP1 = TopicPartition(T, 0), TopicPartition(T, 1)


def test_asks_only_older_epochs_of_their_current_leader_and_caches() -> None:
    fake = FakeSeam(epoch_ends={(TP0, 4): (4, 10), (TP1, 1): (1, 7)})
    now = [0.0]
    ends = EpochEnds("c", fake.offsets_for_leader_epoch, clock=lambda: now[0])
    commits = {
        CommitKey("g1", T, 0): _point(15, 4),  # older epoch: asked of leader 1
        CommitKey("g2", T, 0): _point(20, 5),  # current epoch: not asked
        CommitKey("g3", T, 0): _point(3, None),  # epoch unknown: not asked
        CommitKey("g4", T, 1): _point(9, 1),  # older epoch: asked of leader 2
        CommitKey("g5", T, 2): _point(9, 1),  # offline partition: not asked
        CommitKey("g6", "gone", 0): _point(9, 1),  # not in the metadata: not asked
        CommitKey("g7", T, 0): _point(12, 4),  # same question as g1: asked once
    }
    first = ends(commits, META)
    assert first == (EpochEnd(T, 0, 4, 4, 10), EpochEnd(T, 1, 1, 1, 7))
    assert ends.complete  # every end asked is known; g5's offline partition has no range to judge either
    assert sorted(c for c in fake.calls) == [
        ("offsets_for_leader_epoch", 1, ((TP0, 4),)),
        ("offsets_for_leader_epoch", 2, ((TP1, 1),)),
    ]
    fake.calls.clear()
    assert ends(commits, META) == first  # answered from the cache
    assert fake.calls == [] and ends.complete
    assert ends(commits, None) == ()
    assert not ends.complete
    assert ends({CommitKey("g2", T, 0): _point(20, 5)}, META) == () and ends.complete  # none behind


def test_failures_yield_nothing_and_are_retried_later_only() -> None:
    fake = FakeSeam(epoch_ends={(TP0, 4): (4, 10)}, down={1})
    now = [0.0]
    ends = EpochEnds("c", fake.offsets_for_leader_epoch, clock=lambda: now[0])
    commits = {CommitKey("g", T, 0): _point(15, 4)}
    assert ends(commits, META) == ()
    assert not ends.complete  # asked, not answered
    assert ends(commits, META) == ()
    assert not ends.complete  # not asked again yet
    assert len(fake.calls) == 1  # not asked again before the retry time
    fake.down.clear()
    now[0] = RETRY_SECONDS + 1
    assert ends(commits, META) == (EpochEnd(T, 0, 4, 4, 10),)
    assert ends.complete


def test_bounded_per_cycle_and_one_epoch_per_partition_per_request() -> None:
    asked: list[tuple[int, tuple[tuple[TopicPartition, int], ...]]] = []

    def source(leader: int, requests: Sequence[tuple[TopicPartition, int]]) -> EpochEndResult:
        asked.append((leader, tuple(requests)))
        return {tp: (e, 100 + e) for tp, e in requests}

    ends = EpochEnds("c", source, max_per_cycle=2)
    commits = {
        CommitKey("a", T, 0): _point(1, 1),
        CommitKey("b", T, 0): _point(1, 2),
        CommitKey("c", T, 0): _point(1, 3),
    }
    got = ends(commits, META)
    assert len(got) == 2
    assert not ends.complete  # one left for the next cycle
    assert all(len(requests) == 1 for _, requests in asked)  # t/0 twice: two requests
    assert len(ends(commits, META)) == 3  # the rest next cycle
    assert ends.complete


def _answering(leader: int, requests: Sequence[tuple[TopicPartition, int]]) -> EpochEndResult:
    return {tp: (e, 100 * e + tp.partition) for tp, e in requests}


_KEYS = [CommitKey(g, T, p) for g in "abc" for p in range(3)]
_step = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(_KEYS), st.none() | st.integers(-1, 6)),
    st.tuples(st.just("remove"), st.sampled_from(_KEYS), st.none()),
    st.tuples(st.just("epochs"), st.none(), st.lists(st.integers(0, 6), min_size=3, max_size=3)),
    st.tuples(st.just("discard"), st.sampled_from(_KEYS), st.integers(0, 2)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_step, max_size=25))
def test_told_what_changed_answers_as_a_full_walk(steps: list[tuple[str, Any, Any]]) -> None:
    """Looking again only at the keys a cycle changed (and at all of them when the metadata changes, or
    when told changes from other offsets than the last call's: the evaluation that made them failed and
    the caller kept its old ones) answers exactly what walking every committed offset answers."""
    told, walked = EpochEnds("c", _answering), EpochEnds("c", _answering)
    meta = metadata([1], {T: [partition(T, p, leader=1, epoch=3) for p in range(3)]})
    commits: dict[CommitKey, CommitPoint] = {}
    for kind, key, value in steps:
        base, changed = commits, set[CommitKey]()
        if kind == "commit":
            commits = {**commits, key: _point(1, value)}
            changed.add(key)
        elif kind == "remove" and key in commits:
            commits = {k: v for k, v in commits.items() if k != key}
            changed.add(key)
        elif kind == "epochs":
            meta = metadata([1], {T: [partition(T, p, leader=1, epoch=e) for p, e in enumerate(value)]})
        elif kind == "discard":  # asked about offsets the caller then drops (its evaluation failed)
            dropped = {**commits, key: _point(1, value)}
            assert told(dropped, meta, (commits, {key})) == walked(dropped, meta)
        assert told(commits, meta, (base, changed)) == walked(commits, meta)


def test_a_raising_source_is_contained() -> None:
    def source(leader: int, requests: Sequence[tuple[TopicPartition, int]]) -> EpochEndResult:
        raise KafkaUnavailableError("down", cluster="c")

    ends = EpochEnds("c", source)
    assert ends({CommitKey("g", T, 0): _point(15, 4)}, META) == ()
    assert not ends.complete


async def test_detection_loop_fires_epoch_divergence_from_the_seams_answer_resolves_once_committed_past(
    tmp_path: Path,
) -> None:
    latest = LatestObservations()
    fake = FakeSeam(epoch_ends={(TP0, 4): (4, 10)})
    now = time.time()
    await latest.put(b.metadata(now - 1, {(T, 0): (1, 5, (1,))}))
    obs = CommittedObservation(b.C, now, (CommittedOffset("g", T, 0, 15, 4),), ("g",))
    await latest.put(obs)
    # the log grew past 15 under epoch 5: the commit is inside it (beyond, committed_beyond_log_end's)
    await latest.put(b.offsets(now, {(T, 0): (0, 30)}))
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        loop = DetectionLoop(
            b.C,
            DetectionSettings(state_save_seconds=3600),
            latest=latest,
            alerts=alerts,
            epoch_ends=EpochEnds(b.C, fake.offsets_for_leader_epoch),
        )
        await loop.evaluate_now()
        [a] = alerts.firing(b.C)
        assert (a.kind, a.group, a.magnitude["messages_diverged"]) == (EPOCH_DIVERGENCE, "g", 5)
        assert fake.calls == [("offsets_for_leader_epoch", 1, ((TP0, 4),))]
        for i in range(1, 3):  # the same commit, ranges observed again: the answer is kept, still firing
            await latest.put(b.offsets(now + i, {(T, 0): (0, 30)}))
            await loop.evaluate_now()
        assert [x.id for x in alerts.firing(b.C)] == [a.id]
        # the group commits 30 under epoch 5: resolved after three evaluations with a range and without it
        await latest.put(CommittedObservation(b.C, now + 3, (CommittedOffset("g", T, 0, 30, 5),), ("g",)))
        for i in range(4, 7):
            await latest.put(b.offsets(now + i, {(T, 0): (0, 30)}))
            await loop.evaluate_now()
        assert alerts.firing(b.C) == ()
    assert len(fake.calls) == 1


async def test_a_standing_divergence_stays_while_its_end_is_not_known_again(tmp_path: Path) -> None:
    """A restart (no end kept) with the leader not answering: evaluations with ranges but without the
    end judge nothing of it, so the alert stays firing instead of resolving and firing again later."""
    latest = LatestObservations()
    now = time.time()
    await latest.put(b.metadata(now - 1, {(T, 0): (1, 5, (1,))}))
    await latest.put(CommittedObservation(b.C, now, (CommittedOffset("g", T, 0, 15, 4),), ("g",)))
    await latest.put(b.offsets(now, {(T, 0): (0, 30)}))
    settings = DetectionSettings(state_save_seconds=3600)
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        answering = FakeSeam(epoch_ends={(TP0, 4): (4, 10)})
        loop = DetectionLoop(
            b.C,
            settings,
            latest=latest,
            alerts=alerts,
            epoch_ends=EpochEnds(b.C, answering.offsets_for_leader_epoch),
        )
        await loop.evaluate_now()
        [a] = alerts.firing(b.C)
        down = FakeSeam(epoch_ends={(TP0, 4): (4, 10)}, down={1})
        loop = DetectionLoop(  # restarted: no state saved, no end kept
            b.C,
            settings,
            latest=latest,
            alerts=alerts,
            epoch_ends=EpochEnds(b.C, down.offsets_for_leader_epoch),
        )
        for i in range(1, 6):
            await latest.put(b.offsets(now + i, {(T, 0): (0, 30)}))
            await loop.evaluate_now()
        assert [x.id for x in alerts.firing(b.C)] == [a.id]
        assert len(down.calls) == 1  # asked once, retried only after RETRY_SECONDS
