from alerts.commits import replay
from alerts.membership import consuming, polled_topics
from alerts.state import DetectionState, GroupPoint
from collectors.model import GroupInfo, GroupMember, TopicPartition
from tests.alerts.builders import T, commit, group_event, groups, inputs, run


def _info(state: str, *assignments: tuple[TopicPartition, ...], protocol_type: str = "consumer") -> GroupInfo:
    members = tuple(GroupMember(f"m{i}", "c", "h", None, a) for i, a in enumerate(assignments))
    return GroupInfo("g", "classic", state, protocol_type, "range", members)


def test_polled_topics_stable_group_union_of_member_assignments() -> None:
    info = _info("Stable", (TopicPartition("b", 0),), (TopicPartition("a", 1), TopicPartition("b", 1)), ())
    assert polled_topics(info) == ("a", "b")


def test_polled_topics_empty_or_dead_group_no_topics() -> None:
    assert polled_topics(_info("Empty")) == polled_topics(_info("Dead")) == ()
    assert polled_topics(_info("Empty", protocol_type="")) == ()  # standalone: never members


def test_polled_topics_rebalancing_or_nothing_assigned_unknown() -> None:
    assert polled_topics(_info("PreparingRebalance", (TopicPartition("a", 0),))) is None
    assert polled_topics(_info("Stable", (), ())) is None  # assignments empty or undecodable


def test_consuming_known_topics_true_for_subscribed_false_for_others() -> None:
    g = GroupPoint("Stable", 0, topics=("a",))
    assert (consuming(g, "a"), consuming(g, "b")) == (True, False)


def test_consuming_memberless_false_unknown_none() -> None:
    assert consuming(GroupPoint("Empty", 0), "a") is False
    assert consuming(GroupPoint("Dead", 0), "a") is False
    assert consuming(GroupPoint("Stable", 0), "a") is None
    assert consuming(None, "a") is None


def test_replay_group_record_members_topics_kept_with_the_group() -> None:
    events = (group_event("Stable", 1, 1, topics=("a", T)),)
    rp = replay(DetectionState(), inputs(group_events=events, tail_live=True))
    assert rp.groups["g"].topics == ("a", T)


def test_replay_kip848_epoch_record_members_topics_unknown() -> None:
    s = run(DetectionState(), inputs(groups=groups(1, {"g": "Stable"}, assigned={"g": ((T, 0),)})), 1)
    assert s.groups["g"].topics == (T,)
    rp = replay(s, inputs(group_events=(group_event(None, 2, 1, generation=5),), tail_live=True))
    assert (rp.groups["g"].state, rp.groups["g"].topics) == ("Stable", None)


def test_replay_removal_carries_the_group_as_it_was_at_the_tombstone() -> None:
    events = (group_event("Stable", 1, 1, topics=("a",)), commit(5, 1, 2), commit(None, 3, 4))
    later = (group_event("Empty", 4, 5),)
    rp = replay(DetectionState(), inputs(commit_events=events, group_events=later, tail_live=True))
    [r] = rp.removals
    assert r.group is not None and (r.group.state, r.group.topics) == ("Stable", ("a",))
    assert rp.groups["g"].state == "Empty"


def test_replay_polled_removal_carries_the_polled_membership() -> None:
    from tests.alerts.builders import committed

    s = run(DetectionState(), inputs(committed=committed(1, {("g", T, 0): 5})), 1)
    polled = groups(2, {"g": "Stable"}, assigned={"g": (("a", 0),)})
    rp = replay(s, inputs(committed=committed(2, {}, groups=("g",)), groups=polled))
    [r] = rp.removals
    assert r.group is not None and (r.source, r.group.topics) == ("poll", ("a",))
