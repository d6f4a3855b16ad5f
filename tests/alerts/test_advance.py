"""alerts.advance: the next state, and the findings, the same whether or not the evaluation knows which
partitions moved since the last offsets observation (:func:`alerts.current.moved_partitions`).

The offsets collector hands an unchanged partition as the same object again, and the metadata stays one
object for its interval (a new observation with no topic changed holds the last one's very topics); an
evaluation then looks again only at the partitions that moved. Whatever
happens between observations (log ends growing and going back, leaders moving, metadata replaced, topics
deleted and re-created, partitions missing from an observation, evaluations without log ranges), each
evaluation must give what one knowing nothing of the last observation gives.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from alerts.engine import evaluate
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Limits, Thresholds
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
)

C = "c"
LIMITS = Limits(lag_messages=50, lag_seconds=60.0, retention_risk_seconds=6 * 3600.0, stall_seconds=40.0)
EVERY = Thresholds()  # every rule at every evaluation
SWEPT = Thresholds(default=LIMITS, sweep_seconds=30.0)  # the slow rules by change between sweeps


class World:
    """Four topics of six partitions; the collectors' objects kept while nothing about them changes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.topics = {f"t{t}": f"id-t{t}-0" for t in range(4)}
        self.parts = {(t, p): PartitionOffsets(t, p, 0, 1000, 1, 3) for t in self.topics for p in range(6)}
        self.leaders = {tp: (1, 3) for tp in self.parts}
        self.meta = self._metadata(0.0)
        self.committed = {("g", t, p): 900 for t, p in self.parts}
        self.recreations = 0

    def _metadata(self, at: float) -> ClusterMetadata:
        topics = tuple(
            TopicInfo(
                t,
                False,
                tuple(
                    PartitionInfo(t, p, *self.leaders[(t, p)], (1, 2, 3), (1, 2, 3))
                    for (tt, p) in self.parts
                    if tt == t
                ),
                topic_id,
            )
            for t, topic_id in self.topics.items()
        )
        return ClusterMetadata(C, at, "id", 1, (), topics)

    def _set(self, tp: tuple[str, int], **change: int) -> None:
        self.parts[tp] = replace(self.parts[tp], **change)

    def move(self, now: float) -> None:
        rng = self.rng
        for tp in rng.sample(sorted(self.parts), 4):  # producers and retention
            o = self.parts[tp]
            end = o.log_end + rng.randint(1, 20)
            self._set(tp, log_end=end, log_start=min(end, o.log_start + rng.choice([0, 0, 5])))
        if rng.random() < 0.15:  # a log end gone back: a truncation (a new leader told now or later)
            tp = rng.choice(sorted(self.parts))
            o = self.parts[tp]
            self._set(tp, log_end=max(o.log_start, o.log_end - rng.randint(1, 30)), leader=2)
            if rng.random() < 0.5:
                leader, epoch = self.leaders[tp]
                self.leaders[tp] = (2 if leader == 1 else 1, epoch + 1)
                self.meta = self._metadata(now)
        if rng.random() < 0.1:  # metadata observed again: the same content, another object
            self.meta = self._metadata(now)
        elif rng.random() < 0.2:  # observed again, no topic changed: the collector's very topics tuple
            self.meta = replace(self.meta, observed_at=now)
        if rng.random() < 0.06:  # a topic deleted and re-created at once: another id, an empty log
            t = rng.choice(sorted(self.topics))
            self.recreations += 1
            self.topics[t] = f"id-{t}-{self.recreations}"
            for tp in [tp for tp in self.parts if tp[0] == t]:
                self.parts[tp] = PartitionOffsets(*tp, 0, rng.randint(0, 5), 1, 0)
            self.meta = self._metadata(now)
        for key in rng.sample(sorted(self.committed), 3):
            self.committed[key] = self.parts[key[1:]].log_end

    def inputs(self, now: float, *, ranges: bool, partial: bool) -> CycleInputs:
        shown = tuple(o for tp, o in self.parts.items() if not (partial and tp == ("t1", 2)))
        return CycleInputs(
            C,
            metadata=self.meta if ranges else None,
            offsets=OffsetsObservation(C, now, shown) if ranges else None,
            committed=CommittedObservation(
                C, now, tuple(CommittedOffset(*k, o, None) for k, o in sorted(self.committed.items())), ("g",)
            ),
        )


@pytest.mark.parametrize("th", [EVERY, SWEPT], ids=["every", "swept"])
@pytest.mark.parametrize("seed", range(8))
def test_an_evaluation_looking_only_at_what_moved_gives_what_a_full_one_gives(
    seed: int, th: Thresholds
) -> None:
    rng = random.Random(seed)
    world = World(rng)
    state, now = DetectionState(), 1_000_000.0
    known = settled = renewed = 0
    for cycle in range(80):
        now += 5.0
        world.move(now)
        inputs = world.inputs(now, ranges=cycle % 6 != 5, partial=cycle % 11 == 7)
        last = state.ranged
        expected, expected_state = evaluate(replace(state, ranged=None), inputs, now, th)
        found, state = evaluate(state, inputs, now, th)
        assert found == expected, f"cycle {cycle}"
        assert state == expected_state, f"cycle {cycle}"
        if inputs.offsets is not None and state.ranged is not None and state.ranged.moved is not None:
            known += 1
            settled += last is not None and last.moved is not None  # folded only the unsettled histories
            assert len(state.ranged.moved) < len(world.parts)
            # a new metadata observation of the same topics: still only what moved
            renewed += last is not None and last.metadata not in (None, inputs.metadata)
    assert known >= 30 and settled >= 15  # most evaluations with log ranges looked only at what moved
    assert renewed >= 2
