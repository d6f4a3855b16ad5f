from alerts.lost import detect_offsets_lost
from alerts.model import OFFSETS_LOST
from alerts.state import CommitKey, DetectionState
from tests.alerts.builders import TH, T, commit, committed, group_event, groups, inputs, metadata, run

DAY = 86400.0
RETENTION = 7 * DAY


def _tailed(state: str, at: float = 100) -> DetectionState:
    events = (group_event(state, at, 1), commit(40, at, 2), commit(70, at, 3, partition=1))
    return run(DetectionState(), inputs(commit_events=events, tail_live=True), at)


def test_detect_offsets_lost_tombstone_while_group_stable_critical_per_partition() -> None:
    s = _tailed("Stable")
    inp = inputs(commit_events=(commit(None, 200, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 200, TH)
    assert (f.kind, f.severity, f.partition, f.cause) == (
        OFFSETS_LOST,
        "critical",
        0,
        "deleted_while_consuming",
    )
    assert f.magnitude["offset"] == 40


def test_detect_offsets_lost_tombstone_soon_after_last_commit_critical_even_if_empty() -> None:
    s = _tailed("Empty")
    inp = inputs(commit_events=(commit(None, 150, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 150, TH)
    assert f.severity == "critical"


def test_detect_offsets_lost_idle_group_all_expired_warning_group_level() -> None:
    s = _tailed("Empty")
    later = 100 + RETENTION + 60
    inp = inputs(commit_events=(commit(None, later, 4), commit(None, later, 5, partition=1)), tail_live=True)
    [f] = detect_offsets_lost(s, inp, later, TH)
    assert (f.severity, f.partition, f.cause, f.magnitude["offsets_lost"]) == ("warning", None, "expired", 2)
    assert f.evidence["offsets"] == ("t[0]=40", "t[1]=70")


def test_detect_offsets_lost_delete_groups_of_idle_group_nothing() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    events = (commit(None, at, 4), commit(None, at, 5, partition=1), group_event("Dead", at, 6))
    assert detect_offsets_lost(s, inputs(commit_events=events, tail_live=True), at, TH) == ()


def test_detect_offsets_lost_all_gone_idle_group_not_deleted_warning_unknown_deletion() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    events = (commit(None, at, 4), commit(None, at, 5, partition=1))
    [f] = detect_offsets_lost(s, inputs(commit_events=events, tail_live=True), at, TH)
    assert (f.severity, f.cause) == ("warning", "deleted")


def test_detect_offsets_lost_part_of_idle_group_offset_delete_nothing() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    assert detect_offsets_lost(s, inputs(commit_events=(commit(None, at, 4),), tail_live=True), at, TH) == ()


def test_detect_offsets_lost_polled_offsets_vanish_while_stable_critical() -> None:
    s = run(
        DetectionState(),
        inputs(committed=committed(10, {("g", T, 0): 5}), groups=groups(10, {"g": "Stable"})),
        10,
    )
    inp = inputs(committed=committed(20, {}, groups=("g",)), groups=groups(20, {"g": "Stable"}))
    [f] = detect_offsets_lost(s, inp, 20, TH)
    assert (f.severity, f.evidence["source"]) == ("critical", "poll")


def test_detect_offsets_lost_group_not_fetched_this_cycle_nothing() -> None:
    s = run(
        DetectionState(),
        inputs(committed=committed(10, {("g", T, 0): 5}), groups=groups(10, {"g": "Stable"})),
        10,
    )
    inp = inputs(committed=committed(20, {("h", T, 0): 1}), groups=groups(20, {"g": "Stable"}))
    assert detect_offsets_lost(s, inp, 20, TH) == ()


def test_detect_offsets_lost_topic_deleted_nothing() -> None:
    s = _tailed("Stable")
    inp = inputs(
        metadata=metadata(200, {("other", 0): (1, 0, (1,))}),
        commit_events=(commit(None, 200, 4),),
        tail_live=True,
    )
    assert detect_offsets_lost(s, inp, 200, TH) == ()


def test_detect_offsets_lost_expiry_judged_by_retention_observed_in_an_earlier_cycle() -> None:
    from collectors.model import ConfigsObservation

    minute = ConfigsObservation("c", 100, (), broker=(("offsets.retention.minutes", "1"),))
    events = (group_event("Empty", 100, 1), commit(40, 100, 2))
    s = run(DetectionState(), inputs(commit_events=events, configs=minute, tail_live=True), 100)
    # a tail-only cycle 61 s later: the offset and then the group are tombstoned by the expiry
    inp = inputs(commit_events=(commit(None, 161, 3), group_event("Dead", 161, 4)), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 161, TH)
    assert (f.severity, f.cause, f.magnitude["offsets_lost"]) == ("warning", "expired", 1)
    assert f.evidence["retention_seconds"] == 60


def test_detect_offsets_lost_expiry_reckoned_from_the_record_when_the_poll_saw_the_commit_first() -> None:
    from collectors.model import ConfigsObservation

    minute = ConfigsObservation("c", 100, (), broker=(("offsets.retention.minutes", "1"),))
    standalone = groups(103, {"g": "Empty"}, protocol_type="")
    # the committed poll at 103 sees the commit made at 100 before the tail delivers its record
    seen = inputs(
        committed=committed(103, {("g", T, 0): 40}), groups=standalone, configs=minute, tail_live=True
    )
    s = run(DetectionState(), seen, 103)
    s = run(s, inputs(commit_events=(commit(40, 100, 2),), tail_live=True), 104)
    assert s.commits[CommitKey("g", T, 0)].at == 100
    # expired 60 s after the commit, before 60 s after the poll: the offset, then the group, tombstoned
    inp = inputs(commit_events=(commit(None, 160.5, 3), group_event("Dead", 160.5, 4)), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 161, TH)
    assert (f.severity, f.cause, f.magnitude["offsets_lost"]) == ("warning", "expired", 1)
