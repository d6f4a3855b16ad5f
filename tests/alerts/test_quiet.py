"""alerts.quiet: a sweep carries a lag judgement over only while it stands; anything that could change it
(a log range, a commit, the clock's answer, time passing the limit) has it judged again."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from alerts.engine import evaluate
from alerts.model import Finding
from alerts.quiet import ranges_changed
from alerts.state import CycleInputs, DetectionState, PartitionKey
from alerts.thresholds import Limits, Thresholds
from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets

C = "c"
KEY = ("g", "t", 0)
TH = Thresholds(default=Limits(lag_messages=50, lag_seconds=600.0, stall_seconds=900.0), sweep_seconds=30.0)


def _offsets(at: float, end: int) -> OffsetsObservation:
    return OffsetsObservation(C, at, (PartitionOffsets("t", 0, 0, end),))


def _committed(at: float, offset: int) -> CommittedObservation:
    return CommittedObservation(C, at, (CommittedOffset("g", "t", 0, offset, None),), ("g",))


def _lag_kinds(found: tuple[Finding, ...]) -> list[str]:
    return [f.kind for f in found if f.kind in ("lag_high", "consumer_stalled")]


def _started(th: Thresholds = TH) -> DetectionState:
    """Swept once at 1000: g 5 behind on t[0] (quiet: nothing can fire for a while)."""
    _, state = evaluate(
        DetectionState(),
        CycleInputs(C, offsets=_offsets(1000.0, 100), committed=_committed(1000.0, 95)),
        1000.0,
        th,
    )
    assert th.sweep_seconds == 0 or (state.swept is not None and state.swept.lag_quiet)
    return state


def test_quiet_lag_range_moved_in_the_sweep_judged_again() -> None:
    state = _started()
    found, _ = evaluate(state, CycleInputs(C, offsets=_offsets(1030.0, 200)), 1030.0, TH)
    assert _lag_kinds(found) == ["lag_high"]


def test_quiet_lag_commit_moved_without_log_ranges_judged_at_the_sweep() -> None:
    state = _started()
    _, state = evaluate(state, CycleInputs(C, committed=_committed(1010.0, 10)), 1010.0, TH)
    found, _ = evaluate(state, CycleInputs(C, offsets=_offsets(1030.0, 100)), 1030.0, TH)
    assert _lag_kinds(found) == ["lag_high"]


def test_quiet_lag_clock_answers_later_judged_again() -> None:
    answers: dict[tuple[str, int, int], float] = {}
    clock: Callable[[str, int, int], float | None] = lambda t, p, o: answers.get((t, p, o))  # noqa: E731
    first = CycleInputs(
        C, offsets=_offsets(1000.0, 100), committed=_committed(1000.0, 95), log_end_reached_at=clock
    )
    _, state = evaluate(DetectionState(), first, 1000.0, TH)
    answers[("t", 0, 96)] = 100.0  # the store knew: the log end reached 96 long ago
    found, _ = evaluate(
        state, CycleInputs(C, offsets=_offsets(1030.0, 100), log_end_reached_at=clock), 1030.0, TH
    )
    assert _lag_kinds(found) == ["lag_high"]


def test_quiet_lag_time_alone_fires_when_a_full_judgement_does() -> None:
    every = Thresholds(default=TH.default, sweep_seconds=0.0)  # every evaluation judges everything
    runs = {}
    for th in (TH, every):
        state, fired = _started(th), []
        for i in range(1, 40):
            now = 1000.0 + 30 * i
            found, state = evaluate(state, CycleInputs(C, offsets=_offsets(now, 100)), now, th)
            fired.append((now, _lag_kinds(found)))
        runs[th.sweep_seconds] = fired
    assert runs[30.0] == runs[0.0]
    assert (1900.0, ["consumer_stalled"]) in runs[30.0]


def test_quiet_lag_carried_while_nothing_changes() -> None:
    state = _started()
    assert state.swept is not None
    quiet = state.swept.lag_quiet
    _, state = evaluate(state, CycleInputs(C, offsets=_offsets(1030.0, 100)), 1030.0, TH)
    assert state.swept is not None and state.swept.at == 1030.0
    assert state.swept.lag_quiet == quiet  # not judged again: the same answer, carried


_A, _B, _C = (PartitionKey("t", p) for p in range(3))


@pytest.mark.parametrize(
    ("now", "changed"),
    [
        ({_A: (0, 5), _B: (0, 7)}, set()),
        ({_A: (0, 6), _B: (0, 7)}, {_A}),
        ({_A: (0, 5), _C: (0, 7)}, {_B, _C}),  # as many as before, one gone and one new
        ({_A: (0, 5)}, {_B}),  # one gone
        ({_A: (0, 5), _B: (0, 7), _C: (1, 1)}, {_C}),  # one new
        ({_A: (None, None), _B: (0, 7)}, {_A}),  # its range no longer observed
    ],
)
def test_ranges_changed_counts_moved_gone_and_new(
    now: dict[PartitionKey, tuple[int | None, int | None]], changed: set[PartitionKey]
) -> None:
    assert ranges_changed({_A: (0, 5), _B: (0, 7)}, now) == changed
