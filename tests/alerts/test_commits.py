from dataclasses import FrozenInstanceError, fields, replace

import pytest

from alerts.commits import CommitMove, _CommitMoveDraft, replay
from alerts.drafts import CommitPointDraft
from alerts.state import CommitKey, CommitPoint, DetectionState
from collectors.model import CommittedObservation, CommittedOffset, Failure
from tests.alerts.builders import T, commit, committed, group_event, groups, inputs, run

K = CommitKey("g", T, 0)


def test_replay_tail_events_in_source_order_moves_and_positions() -> None:
    events = (commit(30, 3, 3), commit(10, 1, 1), commit(20, 2, 2))
    rp = replay(DetectionState(), inputs(commit_events=events, tail_live=True))
    assert [(m.old.offset, m.new.offset) for m in rp.moves] == [(10, 20), (20, 30)]
    assert rp.commits[K].offset == 30 and rp.tail_positions == {0: 3}


def test_replay_tail_points_and_moves_are_frozen_ones_like_any_other() -> None:
    """Built as drafts (CommitPointDraft, _CommitMoveDraft), then given their class: the same."""
    rp = replay(DetectionState(), inputs(commit_events=(commit(10, 1, 1), commit(20, 2, 2)), tail_live=True))
    old = CommitPoint(10, None, 1.0, 1.0, "tail", None, None, None, None)
    new = CommitPoint(20, None, 2.0, 2.0, "tail", None, None, None, None)
    built = CommitMove(K, old, new, None, None, 2.0)
    (move,) = rp.moves
    for got, want in ((rp.commits[K], new), (move.old, old), (move, built)):
        assert type(got) is type(want) and got == want and hash(got) == hash(want) and repr(got) == repr(want)
        assert replace(got) == want  # type: ignore[type-var]
    with pytest.raises(FrozenInstanceError):
        rp.commits[K].offset = 0  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        move.moved_after = 0.0  # type: ignore[misc]


def test_commit_drafts_have_their_classes_fields() -> None:
    def described(cls: type) -> list[tuple[str, object, object]]:
        return [(f.name, f.type, f.default) for f in fields(cls)]

    assert described(CommitPointDraft) == described(CommitPoint)
    assert CommitPointDraft.__slots__ == CommitPoint.__slots__
    assert described(_CommitMoveDraft) == described(CommitMove)
    assert _CommitMoveDraft.__slots__ == CommitMove.__slots__


def test_replay_group_state_at_commit_time_follows_group_records() -> None:
    events = (commit(10, 1, 1), commit(5, 3, 3))
    rp = replay(
        DetectionState(),
        inputs(commit_events=events, group_events=(group_event("Empty", 2, 2),), tail_live=True),
    )
    [m] = rp.moves
    assert m.group_state == "Empty"


def test_replay_tail_live_poll_seeds_only_unseen_keys_the_first_of_a_duplicate() -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(10, 1, 1),), tail_live=True), 2)
    new = CommitKey("g", T, 1)
    polled = CommittedObservation(
        "c",
        3.0,
        (
            CommittedOffset("g", T, 0, 99, None),
            CommittedOffset("g", T, 1, 40, None),
            CommittedOffset("g", T, 1, 41, None),
        ),
        ("g",),
    )
    rp = replay(s, inputs(committed=polled, tail_live=True))
    assert rp.commits[K].offset == 10 and rp.commits[new].offset == 40
    assert rp.changed == {new} and rp.moves == ()


def test_replay_tail_live_ignores_polled_values_for_known_keys() -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(10, 1, 1),), tail_live=True), 2)
    rp = replay(s, inputs(committed=committed(3, {K: 99}), tail_live=True))
    assert rp.moves == () and rp.commits[K].offset == 10


def test_replay_tail_live_a_poll_taken_before_a_tombstone_does_not_bring_the_offset_back() -> None:
    # DeleteGroups at 10 (the tail's tombstone); the committed poll taken at 9 is evaluated after it
    s = run(DetectionState(), inputs(commit_events=(commit(50, 1, 1),), tail_live=True), 2)
    s = run(s, inputs(commit_events=(commit(None, 10, 2),), tail_live=True), 10)
    assert K not in s.commits and s.tombstoned == {K: 10.0}
    s = run(s, inputs(committed=committed(9, {K: 50}), tail_live=True), 11)
    assert K not in s.commits  # history, not a commit to seed
    s = run(s, inputs(committed=committed(12, {}), tail_live=True), 12)
    assert s.tombstoned == {}  # a poll taken after the tombstone: nothing older can follow


def test_replay_tail_live_a_key_committed_again_after_its_tombstone_is_seeded_and_tracked() -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(None, 10, 1),), tail_live=True), 10)
    s = run(s, inputs(commit_events=(commit(70, 11, 2),), tail_live=True), 11)
    assert s.commits[K].offset == 70 and s.tombstoned == {}


def test_replay_tail_gone_a_poll_taken_before_the_tails_last_commit_is_no_move() -> None:
    """A poll is sent at 9; the tail reads a commit made at 10; the tail stops (a stop, a gap) before the
    poll is evaluated. The poll's older value is history, not a rewind (a bench run's stop paged 25 such
    "admin resets", each a claim that messages were re-read); a poll sent after the commit is judged."""
    s = run(DetectionState(), inputs(committed=committed(1, {K: 1})), 1)
    s = run(s, inputs(commit_events=(commit(2, 10, 1),), tail_live=True), 10)
    rp = replay(s, inputs(committed=committed(9, {K: 1})))
    assert rp.moves == () and rp.commits[K].offset == 2
    rp = replay(s, inputs(committed=committed(11, {K: 1})))
    assert [(m.old.offset, m.new.offset) for m in rp.moves] == [(2, 1)] and rp.commits[K].offset == 1


def test_replay_tail_gone_a_poll_taken_under_the_live_tail_only_seeds() -> None:
    """A poll sent at 11, while the live tail had read a commit stamped 10 that the coordinator did not
    answer yet; the tail stops or fails before the poll is judged. Taken under the live tail
    (``under_tail``), the poll seeds what the tail never told and neither moves nor removes anything;
    the same poll taken without the tail is the newer value."""
    other = CommitKey("g", T, 1)
    gone = CommitKey("g", T, 2)
    s = run(DetectionState(), inputs(committed=committed(1, {K: 1, gone: 5})), 1)
    s = run(s, inputs(commit_events=(commit(2, 10, 1),), tail_live=True), 10)
    poll = replace(committed(11, {K: 1, other: 7}), under_tail=True)
    rp = replay(s, inputs(committed=poll))
    assert rp.moves == () and rp.removals == ()
    assert (rp.commits[K].offset, rp.commits[other].offset, rp.commits[gone].offset) == (2, 7, 5)
    rp = replay(s, inputs(committed=replace(poll, under_tail=False)))
    assert [(m.old.offset, m.new.offset) for m in rp.moves] == [(2, 1)]
    assert [r.key for r in rp.removals] == [gone]


def test_replay_poll_failed_group_offsets_not_removed() -> None:
    s = run(DetectionState(), inputs(committed=committed(1, {K: 10})), 1)
    obs = committed(2, {}, groups=("g",))
    obs = type(obs)(obs.cluster, obs.observed_at, (), obs.groups, (Failure("group", "g", "Timeout", "x"),))
    rp = replay(s, inputs(committed=obs))
    assert rp.removals == () and rp.commits[K].offset == 10


def test_replay_polled_group_state_change_resets_since() -> None:
    s = run(DetectionState(), inputs(groups=groups(1, {"g": "Stable"})), 1)
    s = run(s, inputs(groups=groups(5, {"g": "Stable"})), 5)
    rp = replay(s, inputs(groups=groups(9, {"g": "Empty"})))
    assert (s.groups["g"].since, rp.groups["g"].state, rp.groups["g"].since) == (1, "Empty", 9)


def test_replay_group_joined_after_a_slow_groups_poll_kept() -> None:
    # the tail saw the group form at 12; a groups poll that listed the groups at 10 arrives afterwards
    s = run(DetectionState(), inputs(group_events=(group_event("Stable", 12, 1),), tail_live=True), 12)
    rp = replay(s, inputs(groups=groups(10, {"other": "Stable"}), tail_live=True))
    assert rp.groups["g"].state == "Stable"
    gone = replay(s, inputs(groups=groups(13, {"other": "Stable"})))
    assert "g" not in gone.groups  # the tail not live: a poll after its news that does not list it: gone


def test_replay_tail_live_a_group_missing_from_a_listing_is_kept_until_its_tombstone() -> None:
    """ListGroups answers nothing, without an error, for a coordinator that is moving or loading (a broker
    restart): with the tail live only the group's tombstone says it is gone."""
    s = run(DetectionState(), inputs(group_events=(group_event("Stable", 12, 1),), tail_live=True), 12)
    kept = replay(s, inputs(groups=groups(13, {"other": "Stable"}), tail_live=True))
    assert (kept.groups["g"].state, kept.groups["g"].since) == ("Stable", 12)
    gone = replay(s, inputs(group_events=(group_event("Dead", 14, 2),), tail_live=True))
    assert "g" not in gone.groups and gone.deleted_groups == {"g"}


def test_replay_tail_live_the_same_polled_offsets_again_seed_what_a_tombstone_removed_since() -> None:
    """A committed view fed by the tail hands the same offsets (one tuple) while nothing moved; from the
    second time they are checked as a set: a key removed since must still be seeded again."""
    other = ("g2", T, 1)
    offs = (CommittedOffset("g", T, 0, 50, None), CommittedOffset(*other, 7, None))

    def poll(at: float) -> CommittedObservation:
        return CommittedObservation("c", at, offs, ("g", "g2"))

    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    assert {k: p.offset for k, p in s.commits.items()} == {K: 50, CommitKey(*other): 7}
    s = run(s, inputs(commit_events=(commit(None, 3, 1),), tail_live=True), 3)
    assert K not in s.commits
    for at in (4, 5):  # the same tuple again, taken after the tombstone
        rp = replay(s, inputs(committed=poll(at), tail_live=True))
        assert rp.commits[K].offset == 50 and K in rp.changed
        s = run(s, inputs(committed=poll(at), tail_live=True), at)
        s = run(s, inputs(commit_events=(commit(None, at + 0.5, int(at * 10)),), tail_live=True), at + 0.5)


def test_replay_tail_live_the_same_polled_offsets_with_a_tombstone_in_the_same_cycle_seed_it_again() -> None:
    offs = (CommittedOffset("g", T, 0, 50, None), CommittedOffset("g2", T, 1, 7, None))

    def poll(at: float) -> CommittedObservation:
        return CommittedObservation("c", at, offs, ("g", "g2"))

    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)  # found all known: carried from here on
    s = run(s, inputs(committed=poll(3), tail_live=True), 3)
    rp = replay(s, inputs(commit_events=(commit(None, 4, 1),), committed=poll(5), tail_live=True))
    assert rp.commits[K].offset == 50 and rp.removals and rp.removals[0].key == K


def test_replay_tail_live_the_tails_own_view_taken_before_it_read_a_tombstone_does_not_bring_it_back() -> (
    None
):
    """The tail-fed committed offsets (``from_tail``) were taken at 5, after the tombstone was written at 4
    but before the tail read it: they still list the key. A poll taken then would not have."""
    offs = (CommittedOffset("g", T, 0, 50, None), CommittedOffset("g2", T, 1, 7, None))

    def view(at: float) -> CommittedObservation:
        return CommittedObservation("c", at, offs, ("g", "g2"), from_tail=True)

    s = run(DetectionState(), inputs(committed=view(1), tail_live=True), 1)
    s = run(s, inputs(committed=view(2), tail_live=True), 2)
    rp = replay(s, inputs(commit_events=(commit(None, 4, 1),), committed=view(5), tail_live=True))
    assert K not in rp.commits and rp.removals and rp.removals[0].key == K
    s = run(s, inputs(commit_events=(commit(None, 4, 1),), committed=view(5), tail_live=True), 5)
    assert K not in s.commits
    # committed again (the tail tells it): back, from its record
    s = run(s, inputs(commit_events=(commit(60, 6, 2),), tail_live=True), 6)
    assert s.commits[K].offset == 60 and s.commits[K].source == "tail"
