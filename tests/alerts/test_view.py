"""alerts.view: one evaluation derives each shared view once, and every detector reads that one."""

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from alerts import blind, commits, current, lost, recreation, rewind, topic_change
from alerts.counters import FETCH_ERRORS, OUT_OF_RANGE, UNCLEAN_ELECTIONS
from alerts.engine import DETECTORS, evaluate
from alerts.model import CollectorStatus, CommitEvent, EpochEnd
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from alerts.view import derive
from collectors.model import (
    BrokerMetrics,
    ConfigsObservation,
    MetricSample,
    MetricsObservation,
    TopicConfig,
)
from tests.alerts.builders import TH, C, T, commit, committed, group_event, groups, inputs, metadata, offsets

# Each shared view and the function that derives it; ``current_partitions`` (ranged joined with unranged)
# is built by the view from its parts, and never called in an evaluation.
VIEWS: dict[str, tuple[Any, str]] = {
    "replay": (commits, "replay"),
    "ranged_partitions": (current, "ranged_partitions"),
    "unranged_partitions": (current, "unranged_partitions"),
    "joined": (current, "joined"),
    "current_partitions": (current, "current_partitions"),
    "seen": (blind, "seen"),
    "offsets_retention_seconds": (current, "offsets_retention_seconds"),
    "topic_changes": (topic_change, "topic_changes"),
    "unconfirmed_resets": (topic_change, "unconfirmed_resets"),
    "recreations": (recreation, "recreations"),
    "rewind_outcomes": (rewind, "rewind_outcomes"),
    "loss_outcomes": (lost, "loss_outcomes"),
}
ONCE = {name: 1 for name in VIEWS if name != "current_partitions"}


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count every call of each view's function, wherever a module of ``alerts`` imported it."""
    calls: Counter[str] = Counter()
    for name, (module, attr) in VIEWS.items():
        real = getattr(module, attr)

        def counted(*args: Any, _real: Callable[..., Any] = real, _name: str = name, **kw: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kw)

        for mod_name, mod in list(sys.modules.items()):
            if (mod_name == "alerts" or mod_name.startswith("alerts.")) and getattr(mod, attr, None) is real:
                monkeypatch.setattr(mod, attr, counted)
    return calls


def _metrics(at: float, unclean: float, fetch_errors: float) -> MetricsObservation:
    out_of_range = MetricSample(FETCH_ERRORS, OUT_OF_RANGE, fetch_errors)
    samples = (MetricSample(UNCLEAN_ELECTIONS, (), unclean), out_of_range)
    return MetricsObservation(C, at, (BrokerMetrics("http://b1", 1, samples),))


def _cycle(
    at: float, committed_offset: int, log_end: int, leader: int, events: tuple[CommitEvent, ...] = ()
) -> CycleInputs:
    """Every observation, the tail and the epoch ends: a cycle that gives every detector something to read."""
    isr = (1, 2, 3) if leader == 1 else (2,)
    return inputs(
        metadata=metadata(
            at, {(T, 0): (leader, leader, isr), (T, 1): (1, 0, (1, 2, 3)), (T, 2): (1, 0, (1,))}
        ),
        offsets=offsets(at, {(T, 0): (0, log_end), (T, 1): (10, 500)}),
        committed=committed(at, {("g", T, 0): committed_offset, ("g", T, 1): 400, ("idle", T, 1): 5}),
        groups=groups(at, {"g": "Stable", "idle": "Empty"}, assigned={"g": ((T, 0), (T, 1))}),
        configs=ConfigsObservation(
            C,
            at,
            (TopicConfig(T, None, None, ("delete",), True, 1, 1),),
            (("offsets.retention.minutes", "10080"),),
        ),
        metrics=_metrics(at, unclean=0.0 if leader == 1 else 1.0, fetch_errors=at),
        commit_events=events,
        group_events=(group_event("Stable", at - 1, 100 + int(at)),),
        epoch_ends=(EpochEnd(T, 0, 1, 1, 700),),
        collectors=(CollectorStatus("offsets", True), CollectorStatus("metrics", False, at - 100, "boom")),
    )


def _two_cycles(th: Thresholds) -> DetectionState:
    s = evaluate(DetectionState(), _cycle(10, 500, 1000, 1), 10, th)[1]
    return evaluate(s, _cycle(20, 600, 1000, 1, (commit(650, 19, 1),)), 20, th)[1]


@pytest.mark.parametrize(
    "th",
    [TH, replace(TH, sweep_seconds=60.0, history_spacing_seconds=30.0)],
    ids=["judged_in_full", "between_sweeps"],
)
def test_evaluate_every_detector_reading_each_shared_view_derived_once(
    th: Thresholds, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous = _two_cycles(th)
    calls = _counting(monkeypatch)
    # the tail rewinds g's offset, the log end goes back under an unclean election
    found, _ = evaluate(previous, _cycle(30, 300, 800, 2, (commit(200, 29, 2),)), 30, th)
    assert {f.kind for f in found} >= {
        "offset_rewind",
        "log_truncation",
        "unclean_leader_election",
        "committed_below_log_start",
        "out_of_range_fetches",
        "config_risk",
        "collector_failure",
    }
    assert dict(calls) == ONCE


def test_detector_called_alone_derives_its_own_view_equal_to_the_evaluation_one() -> None:
    previous = _two_cycles(TH)
    inp = _cycle(30, 300, 800, 2, (commit(200, 29, 2),))
    view = derive(previous, inp, TH)
    for detect in DETECTORS:
        assert detect(previous, inp, 30, TH) == detect(previous, inp, 30, TH, view)


def test_derive_given_a_replay_uses_it() -> None:
    previous = _two_cycles(TH)
    inp = _cycle(30, 300, 800, 2)
    replayed = commits.replay(previous, inp)
    assert derive(previous, replace(inp, epoch_ends=()), TH, replayed).replayed is replayed
