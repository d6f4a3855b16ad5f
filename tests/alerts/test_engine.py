"""The engine runs every detector; ordinary operation raises nothing above info."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.counters import UNCLEAN_ELECTIONS
from alerts.current import range_history
from alerts.engine import DETECTORS, evaluate
from alerts.model import CommitEvent, Finding, GroupEvent
from alerts.state import CommitKey, DetectionState, PartitionKey
from tests.alerts.builders import TH, C, T, committed, groups, inputs, kinds, metadata, metrics, offsets

G = ("g", T, 0)


def test_evaluate_runs_all_detectors_and_returns_next_state() -> None:
    s = DetectionState()
    _, s = evaluate(
        s, inputs(offsets=offsets(10, {(T, 0): (0, 1000)}), committed=committed(10, {G: 500})), 10, TH
    )
    found, s2 = evaluate(
        s, inputs(offsets=offsets(20, {(T, 0): (600, 1000)}), committed=committed(20, {G: 300})), 20, TH
    )
    assert sorted(kinds(found)) == ["committed_below_log_start", "offset_rewind"]
    assert s2.commits[CommitKey(*G)].offset == 300 and len(s2.ranges[(T, 0)]) == 2
    assert len(DETECTORS) == 15


def test_evaluate_same_arguments_same_result() -> None:
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 1000)}), committed=committed(10, {G: 500}))
    assert evaluate(DetectionState(), inp, 10, TH) == evaluate(DetectionState(), inp, 10, TH)


def _leader_cycle(
    at: float, leader: int, epoch: int, end: int, c: int, unclean: float = 0
) -> dict[str, object]:
    return {
        "metadata": metadata(at, {(T, 0): (leader, epoch, (1, 2, 3))}),
        "offsets": offsets(at, {(T, 0): (0, end)}),
        "committed": committed(at, {G: c}),
        "groups": groups(at, {"g": "Stable"}),
        "metrics": metrics(at, {1: {UNCLEAN_ELECTIONS: unclean}}),
    }


def test_evaluate_rolling_restart_and_preferred_election_raise_nothing() -> None:
    s = DetectionState()
    plan = [(1, 3), (2, 4), (3, 5), (1, 6), (1, 6), (2, 7)]  # (leader from the ISR, rising epoch)
    for i, (leader, epoch) in enumerate(plan):
        found, s = evaluate(
            s, inputs(**_leader_cycle(10.0 * i, leader, epoch, 100 * i + 100, 100 * i)), 10.0 * i, TH
        )
        assert found == ()


def test_evaluate_rebalancing_group_forward_commits_raise_nothing() -> None:
    s = DetectionState()
    src = 0
    for gen in range(1, 6):
        src += 1
        members = tuple(f"m{i}" for i in range(gen % 3 + 1))
        events: list[CommitEvent | GroupEvent] = [
            GroupEvent(C, "g", "Stable", gen, "consumer", gen * 10_000, 0, src, members)
        ]
        for j in range(3):
            src += 1
            events.append(
                CommitEvent(C, "g", T, 0, gen * 30 + j * 10, None, gen * 10_000 + j, 0, src, generation=gen)
            )
        inp = inputs(
            offsets=offsets(gen * 10.0 + 5, {(T, 0): (0, 1000)}),
            commit_events=tuple(e for e in events if isinstance(e, CommitEvent)),
            group_events=tuple(e for e in events if isinstance(e, GroupEvent)),
            tail_live=True,
        )
        found, s = evaluate(s, inp, gen * 10.0 + 5, TH)
        assert found == ()


def test_evaluate_consumer_caught_up_at_log_end_for_long_raises_nothing() -> None:
    s = DetectionState()
    for i in range(10):
        found, s = evaluate(
            s,
            inputs(offsets=offsets(600.0 * i, {(T, 0): (0, 100)}), committed=committed(600.0 * i, {G: 100})),
            600.0 * i,
            TH,
        )
        assert found == ()


cycle = st.tuples(
    st.integers(0, 400),  # messages produced this cycle
    st.floats(0, 1),  # how far toward the log end the group commits
    st.booleans(),  # leader moves to another ISR member (epoch rises)
)


def _forward_run(steps: list[tuple[int, float, bool]], tail: bool) -> list[Finding]:
    s, out = DetectionState(), []
    end, c, leader, epoch = 0, 0, 1, 0
    for i, (produced, frac, move) in enumerate(steps):
        at = 10.0 * (i + 1)
        end += produced
        c = c + int((end - c) * frac)
        if move:
            leader, epoch = leader % 3 + 1, epoch + 1
        kw: dict[str, object] = {
            "metadata": metadata(at, {(T, 0): (leader, epoch, (1, 2, 3))}),
            "offsets": offsets(at, {(T, 0): (0, end)}),
            "groups": groups(at, {"g": "Stable"}),
            "metrics": metrics(at, {1: {UNCLEAN_ELECTIONS: 2}}),
        }
        if tail:
            kw["commit_events"] = (CommitEvent(C, "g", T, 0, c, epoch, int(at * 1000) - 1, 0, i),)
            kw["tail_live"] = True
        else:
            kw["committed"] = committed(at, {G: c})
        found, s = evaluate(s, inputs(**kw), at, TH)
        out.extend(found)
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(cycle, min_size=1, max_size=15), st.booleans())
def test_evaluate_forward_traffic_never_warning_or_critical(
    steps: list[tuple[int, float, bool]], tail: bool
) -> None:
    assert [f for f in _forward_run(steps, tail) if f.severity != "info"] == []


def test_commit_history_keeps_samples_spacing_apart_and_each_move() -> None:
    spaced = replace(TH, history_spacing_seconds=15.0)
    state = DetectionState()
    for at, value in ((0.0, 0), (1.0, 1), (2.0, 2), (3.0, 2), (16.0, 16), (17.0, 16), (40.0, 16)):
        state = evaluate(state, inputs(committed=committed(at, {("g", T, 0): value})), at, spaced)[1]
    [history] = state.commit_history.values()
    # 1 and 2 fell within 15 s of 0 (the newest move replaced them); 17 did not move within 15 s of 16
    assert [(s.at, s.offset) for s in history] == [(0.0, 0), (16.0, 16), (40.0, 16)]


def test_range_history_keeps_a_run_of_equal_ranges_as_first_and_last() -> None:
    state = DetectionState()
    for at, end in ((0.0, 10), (5.0, 10), (10.0, 10), (15.0, 10), (20.0, 12), (25.0, 12), (30.0, 12)):
        state = evaluate(state, inputs(offsets=offsets(at, {(T, 0): (0, end)})), at, TH)[1]
    history = range_history(state, PartitionKey(T, 0))  # the run's end is the partition's point
    assert [(s.at, s.log_end) for s in history] == [(0.0, 10), (15.0, 10), (20.0, 12), (30.0, 12)]


def test_commit_history_keeps_a_run_of_equal_offsets_as_first_and_last() -> None:
    spaced = replace(TH, history_spacing_seconds=60.0)
    state = DetectionState()
    for at in range(0, 6000, 60):  # idle for 100 minutes, then one move
        state = evaluate(state, inputs(committed=committed(at, {("g", T, 0): 7})), at, spaced)[1]
    state = evaluate(state, inputs(committed=committed(6000, {("g", T, 0): 9})), 6000, spaced)[1]
    [history] = state.commit_history.values()
    assert [(s.at, s.offset) for s in history] == [(0, 7), (5940, 7), (6000, 9)]
