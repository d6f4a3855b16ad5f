"""Property tests: whatever the sequence of observations (retention advancing, producers, a group moving
forward, back or not at all, cycles where the log range was not observed, long and short gaps), every
finding's magnitude stays within what the observed log range and committed offsets allow.

The generator (:data:`step`) is kept here for later rules to reuse; hypothesis runs derandomized, so a run
is the same every time (a failure found is a failure kept, never a flaky test).
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.engine import evaluate
from alerts.model import (
    COMMITTED_BELOW_LOG_START,
    OFFSET_REWIND,
    OFFSET_SKIP,
    RETENTION_RISK,
    Finding,
)
from alerts.state import DetectionState
from tests.alerts.builders import TH, T, committed, groups, inputs, offsets

G = ("g", T, 0)

step = st.tuples(
    st.sampled_from([5.0, 15.0, 60.0, 240.0]),  # seconds since the previous cycle
    st.integers(0, 300),  # messages produced
    st.integers(0, 300),  # messages retention deletes (the log start moves, never past the log end)
    st.sampled_from(["forward", "back", "hold", "to_start", "to_end"]),  # what the group commits
    st.floats(0, 1),  # how far it moves
    st.booleans(),  # the log range was observed this cycle (else a blind cycle: no offsets)
)


def _run(steps: list[tuple[float, int, int, str, float, bool]]) -> Iterator[tuple[Finding, int, int, int]]:
    """Each finding with the log start, log end and committed offset of its cycle."""
    s = DetectionState()
    at, start, end, c = 0.0, 0, 1_000, 500
    for gap, produced, deleted, action, frac, observed in steps:
        at += gap
        end += produced
        start = min(end, start + deleted)
        if action == "forward":
            c += int((end - c) * frac) if end > c else 0
        elif action == "back":
            c -= int(c * frac)
        elif action == "to_start":
            c = start
        elif action == "to_end":
            c = end
        kw: dict[str, object] = {"committed": committed(at, {G: c}), "groups": groups(at, {"g": "Stable"})}
        if observed:
            kw["offsets"] = offsets(at, {(T, 0): (start, end)})
        found, s = evaluate(s, inputs(**kw), at, TH)
        for f in found:
            yield f, start, end, c


def _n(values: object, name: str) -> float:
    """A numeric field of a finding's magnitude or evidence (present and a number)."""
    assert isinstance(values, dict)
    value = values[name]
    assert isinstance(value, int | float), (name, value)
    return value


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(step, min_size=2, max_size=25))
def test_magnitudes_within_the_observed_log_and_offsets(
    steps: list[tuple[float, int, int, str, float, bool]],
) -> None:
    for f, start, _end, _c in _run(steps):
        m, e = dict(f.magnitude), dict(f.evidence)
        if f.kind == RETENTION_RISK:
            assert 0 <= _n(m, "messages_at_risk") <= _n(e, "log_end") - _n(e, "committed"), f
            assert _n(m, "seconds_to_loss") >= 0 and _n(e, "consume_rate_per_s") >= 0, f
        elif f.kind == OFFSET_REWIND:
            # after a truncation only the messages kept below its log end are re-read
            upto = min(_n(e, "old_offset"), e.get("log_end_after_truncation", _n(e, "old_offset")))
            assert _n(m, "messages_replayed") == upto - _n(e, "new_offset") > 0, f
        elif f.kind == OFFSET_SKIP:
            old, skipped, deleted = (
                _n(e, "old_offset"),
                _n(m, "messages_skipped"),
                _n(m, "messages_deleted_unread"),
            )
            moved = abs(_n(e, "new_offset") - old)
            # certain figures within the move, bounds above them: never a claim the move cannot hold
            assert 0 <= deleted <= skipped <= moved, f
            assert deleted <= max(0, start - old), f
            assert skipped + m.get("messages_read_past", 0) <= moved, f
            if "messages_skipped_max" in m:
                # from beyond a truncated end the bound also counts what was written below the old offset
                top = moved if e.get("old_offset_was") != "beyond_log_end" else _n(e, "new_offset")
                assert skipped <= _n(m, "messages_skipped_max") <= top, f
                assert "messages_read_past" not in m or m["messages_read_past"] == 0, f
            if "messages_read_past_max" in m:
                assert skipped + _n(m, "messages_read_past_max") <= moved, f
        elif f.kind == COMMITTED_BELOW_LOG_START:
            lost, committed_at = _n(m, "messages_lost"), _n(e, "committed")
            assert 0 < lost == _n(e, "log_start") - committed_at <= start - committed_at, f
