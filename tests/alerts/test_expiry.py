from alerts.expiry import detect_offsets_expiry_risk, expiry_at
from alerts.model import OFFSETS_EXPIRY_RISK
from alerts.state import CommitPoint, DetectionState, GroupPoint
from collectors.model import ConfigsObservation
from tests.alerts.builders import TH, C, T, committed, groups, inputs, run

H = 3600.0
RET = 7 * 24 * H


def _idle(state: str = "Empty", protocol_type: str = "consumer") -> DetectionState:
    return run(
        DetectionState(),
        inputs(
            committed=committed(0, {("g", T, 0): 5, ("g", T, 1): 6}),
            groups=groups(0, {"g": state}, protocol_type),
        ),
        0,
    )


def test_detect_offsets_expiry_risk_empty_classic_group_within_horizon_info() -> None:
    now = RET - 10 * H
    [f] = detect_offsets_expiry_risk(_idle(), inputs(), now, TH)
    assert (f.kind, f.severity, f.group, f.cause) == (OFFSETS_EXPIRY_RISK, "info", "g", "empty_since")
    assert f.magnitude == {"seconds_to_expiry": 10 * H, "partitions_expiring": 2}
    assert f.evidence["expires_at"] == RET


def test_detect_offsets_expiry_risk_far_from_expiry_nothing() -> None:
    assert detect_offsets_expiry_risk(_idle(), inputs(), 24 * H, TH) == ()


def test_detect_offsets_expiry_risk_stable_group_nothing() -> None:
    assert detect_offsets_expiry_risk(_idle("Stable"), inputs(), RET - H, TH) == ()


def test_detect_offsets_expiry_risk_broker_retention_setting_used() -> None:
    cfg = ConfigsObservation(C, 0, (), broker=(("offsets.retention.minutes", "1440"),))
    [f] = detect_offsets_expiry_risk(_idle(), inputs(configs=cfg), 20 * H, TH)
    assert f.magnitude["seconds_to_expiry"] == 4 * H


def test_expiry_at_classic_empty_group_counts_from_empty_since() -> None:
    point = CommitPoint(5, None, at=100, moved_at=100, source="tail")
    group = GroupPoint("Empty", since=500, group_type="classic", protocol_type="consumer")
    assert expiry_at(point, group, RET) == (500 + RET, "empty_since")


def test_expiry_at_standalone_group_counts_from_commit() -> None:
    point = CommitPoint(5, None, at=100, moved_at=100, source="tail")
    group = GroupPoint("Empty", since=500, group_type="classic", protocol_type="")
    assert expiry_at(point, group, RET) == (100 + RET, "commit_timestamp")


def test_expiry_at_kip848_group_counts_from_commit() -> None:
    point = CommitPoint(5, None, at=100, moved_at=100, source="tail")
    group = GroupPoint("Empty", since=500, group_type="consumer", protocol_type="consumer")
    assert expiry_at(point, group, RET) == (100 + RET, "commit_timestamp")


def test_expiry_at_explicit_expire_timestamp_wins() -> None:
    point = CommitPoint(5, None, at=100, moved_at=100, source="tail", expire_at=999)
    assert expiry_at(point, GroupPoint("Stable", 0), RET) == (999, "explicit_expire_timestamp")


def test_expiry_at_active_group_never() -> None:
    point = CommitPoint(5, None, at=100, moved_at=100, source="tail")
    assert expiry_at(point, GroupPoint("Stable", 0, "classic", "consumer"), RET) == (None, "group_active")


def test_detect_offsets_expiry_risk_still_reported_in_cycles_without_configs() -> None:
    from tests.alerts.builders import commit, group_event

    minute = ConfigsObservation("c", 100, (), broker=(("offsets.retention.minutes", "1"),))
    events = (group_event("Empty", 100, 1), commit(40, 100, 2))
    s = run(DetectionState(), inputs(commit_events=events, configs=minute, tail_live=True), 100)
    [f] = detect_offsets_expiry_risk(s, inputs(tail_live=True), 130, TH)  # no configs this cycle
    assert f.evidence["retention_seconds"] == 60 and f.magnitude["seconds_to_expiry"] == 30


def test_detect_offsets_expiry_risk_stable_group_missing_from_a_listing_while_tailed_nothing() -> None:
    """A broker restart: the group's coordinator moves, ListGroups leaves the group out without an error;
    with the tail live the group is still Stable (soak: 20 active groups reported as expiring)."""
    s = run(_idle("Stable"), inputs(groups=groups(1, {"other": "Empty"}), tail_live=True), 1)
    assert s.groups["g"].state == "Stable"
    assert detect_offsets_expiry_risk(s, inputs(tail_live=True), RET - H, TH) == ()


def test_detect_offsets_expiry_risk_active_group_commit_with_explicit_expiry_still_judged() -> None:
    """An active group keeps its offsets, except a v1 commit's explicit expiry: the active groups' offsets
    skipped without a look (most of a fleet) are only those without one."""
    from alerts.state import CommitKey

    stable = GroupPoint("Stable", 0, "classic", "consumer")
    commits = {
        CommitKey("g", T, 0): CommitPoint(5, None, at=100, moved_at=100, source="tail", expire_at=RET),
        CommitKey("g", T, 1): CommitPoint(6, None, at=100, moved_at=100, source="tail"),
        CommitKey("h", T, 0): CommitPoint(7, None, at=100, moved_at=100, source="tail"),
    }
    state = DetectionState(commits=commits, groups={"g": stable, "h": stable})
    [f] = detect_offsets_expiry_risk(state, inputs(), RET - 2 * H, TH)
    assert (f.group, f.cause, f.magnitude) == (
        "g",
        "explicit_expire_timestamp",
        {"seconds_to_expiry": 2 * H, "partitions_expiring": 1},
    )
