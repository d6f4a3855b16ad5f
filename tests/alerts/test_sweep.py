"""alerts.sweep: the slow rules judged by change give what a full judgement gives.

With the clock stopped nothing can change with time alone, so after every evaluation the change-driven
findings must equal a full evaluation's of the same previous state and inputs, whatever moved: log ends
and starts, commits forward and back, offsets deleted and re-committed, groups going Empty and back,
partitions missing from an observation, evaluations without log ranges (tail only).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from alerts.engine import evaluate
from alerts.model import CommitEvent, Finding
from alerts.state import CommitKey, CycleInputs, DetectionState, Swept
from alerts.thresholds import Limits, Thresholds
from collectors.model import (
    CommittedObservation,
    CommittedOffset,
    ConfigsObservation,
    GroupInfo,
    GroupsObservation,
    OffsetsObservation,
    PartitionOffsets,
)

CLUSTER = "c"
SLOW = {"lag_high", "consumer_stalled", "retention_risk", "offsets_expiry_risk"}
LIMITS = Limits(
    lag_messages=6,
    lag_seconds=120.0,
    retention_risk_seconds=6 * 3600.0,
    expiry_risk_seconds=24 * 3600.0,
    stall_seconds=90.0,
)


class World:
    """A few topics whose logs grow and get deleted from, and groups that commit, fall behind, rewind,
    lose offsets and go Empty."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tps = [(f"t{t}", p) for t in range(3) for p in range(4)]
        self.starts = {tp: 0 for tp in self.tps}
        self.ends = {tp: 1000 for tp in self.tps}
        self.groups = [f"g{g}" for g in range(6)]
        self.committed = {(g, *tp): 500 for g in self.groups for tp in self.tps if rng.random() < 0.5}
        self.states = {g: "Stable" for g in self.groups}
        self.tail: list[CommitEvent] = []  # the commits and tombstones since the last cycle
        self.source_offset = 0

    def steady(self) -> None:
        """Retention deleting and producers writing at a steady pace; g0 stuck (a forecast to make)."""
        for tp in self.tps:
            self.ends[tp] += 5
            self.starts[tp] = min(self.starts[tp] + 2, self.ends[tp])
        for key in self.committed:
            if key[0] != "g0":
                self.committed[key] = self.ends[(key[1], key[2])]

    def shake(self) -> None:
        rng = self.rng
        for tp in rng.sample(self.tps, 3):
            self.ends[tp] += rng.randint(0, 9)
            if rng.random() < 0.3:
                self.starts[tp] = min(self.starts[tp] + rng.randint(1, 30), self.ends[tp])
        for key in rng.sample(sorted(self.committed), min(4, len(self.committed))):
            end = self.ends[(key[1], key[2])]
            self._commit(key, rng.choice([end, max(0, end - rng.randint(1, 20)), rng.randint(0, end + 5)]))
        if rng.random() < 0.3 and self.committed:
            self._commit(rng.choice(sorted(self.committed)), None)
        if rng.random() < 0.3:
            g, tp = rng.choice(self.groups), rng.choice(self.tps)
            self._commit((g, *tp), self.starts[tp])
        if rng.random() < 0.3:
            g = rng.choice(self.groups)
            self.states[g] = "Empty" if self.states[g] == "Stable" else "Stable"

    def _commit(self, key: tuple[str, str, int], offset: int | None) -> None:
        if offset is None:
            del self.committed[key]
        else:
            self.committed[key] = offset
        self.source_offset += 1
        stamp = 1_000_000_000 + self.source_offset  # ms: before any cycle's time, in commit order
        self.tail.append(CommitEvent(CLUSTER, *key, offset, None, stamp, 0, self.source_offset))

    def inputs(self, now: float, *, ranges: bool, partial: bool, tail: bool = False) -> CycleInputs:
        shown = [tp for tp in self.tps if not (partial and self.rng.random() < 0.25)]
        offsets = OffsetsObservation(
            CLUSTER,
            now,
            tuple(PartitionOffsets(t, p, self.starts[(t, p)], self.ends[(t, p)]) for t, p in shown),
        )
        committed = CommittedObservation(
            CLUSTER,
            now,
            tuple(CommittedOffset(g, t, p, o, None) for (g, t, p), o in sorted(self.committed.items())),
            tuple(self.groups),
        )
        groups = GroupsObservation(
            CLUSTER,
            now,
            tuple(GroupInfo(g, "classic", s, "consumer", "range") for g, s in self.states.items()),
        )
        configs = ConfigsObservation(CLUSTER, now, (), (("offsets.retention.minutes", "1000"),))
        events, self.tail = tuple(self.tail), []
        return CycleInputs(
            CLUSTER,
            offsets=offsets if ranges else None,
            committed=committed,
            groups=groups,
            configs=configs,
            commit_events=events if tail else (),
            tail_live=tail,
        )


def _full(previous: DetectionState, inputs: CycleInputs, now: float) -> tuple[Finding, ...]:
    found, _ = evaluate(replace(previous, swept=None), inputs, now, Thresholds(default=LIMITS))
    return found


@pytest.mark.parametrize("tail", [False, True], ids=["polled", "tailed"])
@pytest.mark.parametrize("seed", range(6))
def test_change_driven_equals_full_with_the_clock_stopped(seed: int, tail: bool) -> None:
    rng = random.Random(seed)
    world = World(rng)
    swept = Thresholds(default=LIMITS, sweep_seconds=3600.0)
    state, now = DetectionState(), 1_000_000.0
    for _ in range(30):  # histories with rates in them: a forecast for the stuck group
        now += 10.0
        world.steady()
        _, state = evaluate(state, world.inputs(now, ranges=True, partial=False), now, swept)
    kinds: set[str] = set()
    for cycle in range(60):
        world.shake()
        inputs = world.inputs(now, ranges=cycle % 5 != 3, partial=cycle % 7 == 2, tail=tail)
        if cycle % 9 == 4:  # a state not the one evaluate returned: what changed is found by comparing
            state = replace(state, commits=dict(state.commits))
        expected = _full(state, inputs, now)
        found, state = evaluate(state, inputs, now, swept)
        assert isinstance(state.swept, Swept) and state.swept.at < now  # judged by change, not swept
        assert found == expected, f"cycle {cycle}"
        # kept in the order emitted (what lets the next evaluation's sort run in one pass)
        assert list(state.swept.lag) == sorted(state.swept.lag), f"cycle {cycle}"
        kinds.update(f.kind for f in found)
    assert SLOW - {"consumer_stalled"} <= kinds  # each slow rule had findings to carry


def test_time_alone_is_seen_at_the_next_sweep() -> None:
    """A stall that only time makes: not seen until the sweep, then seen; sweep 0 sees it at once."""
    world = World(random.Random(1))
    every, by_change = Thresholds(default=LIMITS), Thresholds(default=LIMITS, sweep_seconds=60.0)
    state, now = DetectionState(), 1_000_000.0
    stalls: list[tuple[float, bool, bool]] = []
    for _ in range(20):
        now += 10.0
        inputs = world.inputs(now, ranges=True, partial=False)  # nothing moves: lag stays, commits stay
        full = any(f.kind == "consumer_stalled" for f in _full(state, inputs, now))
        found, state = evaluate(state, inputs, now, by_change)
        stalls.append((now, full, any(f.kind == "consumer_stalled" for f in found)))
    first_full = next(at for at, full, _ in stalls if full)
    first_swept = next(at for at, _, seen in stalls if seen)
    assert first_full <= first_swept <= first_full + by_change.sweep_seconds
    assert evaluate(DetectionState(), world.inputs(now, ranges=True, partial=False), now, every)[0]


def test_a_change_is_judged_at_once() -> None:
    """The lagging group catches up: its lag_high goes in the same evaluation, not at the next sweep."""
    world = World(random.Random(2))
    th = Thresholds(default=LIMITS, sweep_seconds=3600.0)
    state, now = DetectionState(), 1_000_000.0
    key = sorted(world.committed)[0]
    world.committed[key] = 0
    found, state = evaluate(state, world.inputs(now, ranges=True, partial=False), now, th)
    assert any(f.kind == "lag_high" and (f.group, f.topic, f.partition) == key for f in found)
    world.committed[key] = world.ends[(key[1], key[2])]
    found, state = evaluate(state, world.inputs(now + 5, ranges=True, partial=False), now + 5, th)
    assert not any(f.kind == "lag_high" and (f.group, f.topic, f.partition) == key for f in found)


def test_between_sweeps_only_moved_offsets_are_sampled() -> None:
    """history_spacing 60 s, sweeps every 30 s: a moved offset is sampled at once, an idle one's newest
    sample is moved to now at a sweep only, a deleted one's history goes with it."""
    world = World(random.Random(3))
    th = Thresholds(default=LIMITS, sweep_seconds=30.0, history_spacing_seconds=60.0)
    state, now = DetectionState(), 1_000_000.0
    moving, idle, deleted = sorted(world.committed)[:3]
    for step in range(1, 25):
        now += 10.0
        world.committed[moving] += 1
        if step == 12:
            world._commit(deleted, None)
        before = state
        _, state = evaluate(state, world.inputs(now, ranges=True, partial=False), now, th)
        assert state.commit_history[CommitKey(*moving)][-1] == (now, world.committed[moving])
        assert (CommitKey(*deleted) in state.commit_history) == (step < 12)
        swept_now = state.swept is not None and state.swept.at == now
        if not swept_now and step > 1:
            assert state.commit_history[CommitKey(*idle)] is before.commit_history[CommitKey(*idle)]
    assert state.commit_history[CommitKey(*idle)][-1].at > now - 60.0  # refreshed by the sweeps


def test_a_commit_beyond_the_log_end_is_flagged_once_a_newer_range_shows_it() -> None:
    """Between sweeps a committed offset beyond the log end is judged again at each evaluation with log
    ranges, though neither it nor its range changes: the range older than the commit did not count, the
    next one does (as a full judgement says)."""
    th = Thresholds(default=LIMITS, sweep_seconds=3600.0)
    t0 = 1_000_000.0

    def offsets(at: float) -> OffsetsObservation:
        return OffsetsObservation(CLUSTER, at, (PartitionOffsets("t", 0, 0, 100),))

    def committed(at: float, offset: int) -> CommittedObservation:
        return CommittedObservation(CLUSTER, at, (CommittedOffset("g", "t", 0, offset, None),), ("g",))

    steps = [
        (t0, CycleInputs(CLUSTER, offsets=offsets(t0), committed=committed(t0, 50))),
        # the poll that sees 150 is newer than the range beside it: not judged beyond that range
        (t0 + 5, CycleInputs(CLUSTER, offsets=offsets(t0 + 5), committed=committed(t0 + 6, 150))),
        (t0 + 10, CycleInputs(CLUSTER, offsets=offsets(t0 + 10))),
    ]
    state, beyond = DetectionState(), []
    for now, inputs in steps:
        expected = _full(state, inputs, now)
        found, state = evaluate(state, inputs, now, th)
        assert found == expected
        beyond.append([f.evidence["observed_at"] for f in found if f.kind == "committed_beyond_log_end"])
    assert isinstance(state.swept, Swept) and state.swept.at == t0  # judged by change after the first
    assert beyond == [[], [], [t0 + 10]]


def test_a_sweep_keeps_the_indexes_while_the_group_partitions_stay_the_same() -> None:
    """Rebuilt only when a group-partition came or went since they were built; the findings are a full
    judgement's either way."""
    world = World(random.Random(4))
    th = Thresholds(default=LIMITS, sweep_seconds=10.0)  # every evaluation below is a sweep
    state, now = DetectionState(), 1_000_000.0
    _, state = evaluate(state, world.inputs(now, ranges=True, partial=False), now, th)
    gone = sorted(world.committed)[0]
    for step in range(4):
        now += 10.0
        world.steady()
        if step == 2:
            world._commit(gone, None)
        inputs = world.inputs(now, ranges=True, partial=False)
        before = state.swept
        expected = _full(state, inputs, now)
        found, state = evaluate(state, inputs, now, th)
        assert found == expected
        assert before is not None and state.swept is not None and state.swept.at == now
        kept = state.swept.by_partition is before.by_partition and state.swept.by_group is before.by_group
        assert kept == (step != 2)
        assert state.swept.indexed == len(state.commits)
    assert CommitKey(*gone) not in {k for keys in state.swept.by_group.values() for k in keys}


def test_a_sweep_falls_due_in_an_evaluation_with_log_ranges() -> None:
    """Due after ``sweep_seconds``: an evaluation without log ranges (tail only) waits for one with them,
    unless twice as long has passed (expiry judges without them)."""
    world = World(random.Random(5))
    th = Thresholds(default=LIMITS, sweep_seconds=30.0)
    t0 = 1_000_000.0
    swept_at = []
    state = DetectionState()
    for at, ranges in ((0, True), (35, False), (40, True), (75, False), (99, False), (101, False)):
        inputs = world.inputs(t0 + at, ranges=ranges, partial=False)
        expected = _full(state, inputs, t0 + at)
        found, state = evaluate(state, inputs, t0 + at, th)
        assert found == expected  # the clock moved, but nothing that takes time has come due
        assert state.swept is not None
        swept_at.append(state.swept.at - t0)
    assert swept_at == [0, 0, 40, 40, 40, 101]
