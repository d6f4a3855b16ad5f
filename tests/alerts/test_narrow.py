"""A saved detection state narrowed to the scope at start: what is out of scope is forgotten, so the first
poll without it reports no loss."""

from __future__ import annotations

from alerts.engine import evaluate
from alerts.narrow import narrow
from alerts.state import DetectionState
from collectors.scope import Scope
from collectors.settings import NameFilter
from tests.alerts.builders import TH, committed, groups, inputs, kinds, offsets, run

RANGES = {("t", 0): (0, 100), ("__internal", 0): (0, 50)}
VALUES = {("g", "t", 0): 10, ("console-consumer-1", "t", 0): 20, ("g", "__internal", 0): 5}
SCOPE = Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"]), NameFilter(exclude=["__.*"]))


def _state() -> DetectionState:
    state = DetectionState()
    for at in (1.0, 2.0):
        state = run(
            state,
            inputs(
                offsets=offsets(at, RANGES),
                committed=committed(at, VALUES),
                groups=groups(at, {"g": "Stable", "console-consumer-1": "Stable"}),
            ),
            at,
        )
    return state


def test_narrow_drops_groups_topics_and_group_partitions_out_of_scope() -> None:
    state = narrow(_state(), SCOPE)
    assert {(k.group, k.topic) for k in state.commits} == {("g", "t")}
    assert {(k.group, k.topic) for k in state.commit_history} <= {("g", "t")}
    assert set(state.groups) == {"g"}
    assert {k.topic for k in state.partitions} == {"t"}


def test_narrow_everything_in_scope_same_state() -> None:
    state = _state()
    assert narrow(state, Scope()) is state
    assert narrow(state, Scope.from_patterns(NameFilter(exclude=["nobody"]))) is state


def _scoped_polls(state: DetectionState) -> list[str]:
    """Kinds found over two scoped polls (a loss is held until its topic is confirmed, then reported)."""
    found: list[str] = []
    for at in (3.0, 100.0):
        scoped = inputs(
            offsets=offsets(at, {("t", 0): (0, 100)}),
            committed=committed(at, {("g", "t", 0): 10}),
            groups=groups(at, {"g": "Stable"}),
        )
        findings, state = evaluate(state, scoped, at, TH)
        found += kinds(findings)
    return found


def test_narrow_then_scoped_polls_report_no_loss() -> None:
    assert _scoped_polls(narrow(_state(), SCOPE)) == []
    # without narrowing, the first polls without them read as offsets lost under a consuming group
    assert "offsets_lost" in _scoped_polls(_state())
