"""Property tests over :mod:`tests.alerts.observations`: a healthy cluster observed with blind spells,
partial answers, repeated and late observations and service restarts raises no offset alert, and no
finding says more than the observed log allows; a blind spell in which nothing changed changes no finding.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.model import COLLECTOR_FAILURE, CONSUMER_STALLED, LAG_HIGH, RETENTION_RISK
from tests.alerts.observations import Step, observe, run_all, step

# What a healthy cluster may raise: lag and retention forecasts (the generated group can lag behind and
# retention can come close to what it read), a partial answer's collector_failure, never an incident.
MAY_RAISE = {LAG_HIGH, CONSUMER_STALLED, RETENTION_RISK, COLLECTOR_FAILURE}


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(step, min_size=2, max_size=30))
def test_no_offset_alert_from_gaps_partial_late_or_repeated_observations(steps: list[Step]) -> None:
    for f, w in observe(steps):
        assert f.kind in MAY_RAISE, f
        if f.kind == COLLECTOR_FAILURE:
            continue
        # what the finding says it observed: never beyond the world (repeated or late inputs are older)
        end, committed = f.evidence["log_end"], f.evidence["committed"]
        assert isinstance(end, int) and isinstance(committed, int), f
        assert end <= w.end and committed <= w.committed, f
        if f.kind == RETENTION_RISK:
            at_risk = f.magnitude["messages_at_risk"]
            assert isinstance(at_risk, int) and 0 <= at_risk <= end - committed, f
        else:
            assert f.magnitude["lag"] == end - committed > 0, f


caught_up = st.tuples(
    st.sampled_from([5.0, 10.0]),
    st.integers(0, 200),
    st.just(1.0),  # the group reads up to the log end every cycle
    st.floats(0, 1),
    st.sampled_from(["full", "full", "outage"]),
    st.sampled_from([45.0, 150.0, 600.0, 1800.0]),
)


CATCH_UP: Step = (5.0, 0, 1.0, 0.0, "full", 45.0)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(caught_up, min_size=2, max_size=30))
def test_a_blind_spell_that_changed_nothing_changes_no_finding(steps: list[Step]) -> None:
    # The world starts 500 behind: a first cycle reads up to the log end, so that the group is caught up
    # before any outage (one first would be a real 500-message stall, which the reference run reports).
    steps = [CATCH_UP, *steps]
    blind = [(f.kind, f.severity, f.group, f.partition) for f in run_all(steps, blind_spells=True)]
    seen = [(f.kind, f.severity, f.group, f.partition) for f in run_all(steps, blind_spells=False)]
    assert blind == seen == []
