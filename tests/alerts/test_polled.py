from dataclasses import replace

from alerts.commits import replay
from alerts.polled import all_known, still_known, unknown_offsets
from alerts.state import CommitKey, CommitPoint, CycleInputs, DetectionState, Polled
from collectors.model import CommittedObservation, CommittedOffset
from tests.alerts.builders import T, commit, inputs, run

K = CommitKey("g", T, 0)
OFFS = (CommittedOffset("g", T, 0, 50, None), CommittedOffset("g2", T, 1, 7, None))


def poll(at: float, offsets: tuple[CommittedOffset, ...] = OFFS) -> CommittedObservation:
    return CommittedObservation("c", at, offsets, ("g", "g2"))


def test_all_known_offsets_seen_first_time_not_known_and_no_keys_built() -> None:
    s = DetectionState()
    assert all_known(poll(1), s, {}, set()) == Polled(OFFS)


def test_replay_same_offsets_tuple_twice_found_all_in_the_states_own_commits() -> None:
    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    assert s.polled == Polled(OFFS) and s.polled.found_in is None
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    assert s.polled is not None and s.polled.offsets is OFFS
    assert s.polled.keys == {("g", T, 0), ("g2", T, 1)} and s.polled.found_in is s.commits
    s = run(s, inputs(commit_events=(commit(60, 3, 1),), tail_live=True), 3)  # a move keeps them all
    assert s.polled is not None and s.polled.found_in is s.commits


def test_replay_an_equal_but_other_offsets_tuple_starts_over() -> None:
    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    s = run(s, inputs(committed=poll(3, (*OFFS,)), tail_live=True), 3)
    assert s.polled is not None and s.polled.offsets is not OFFS and s.polled.keys is None


def test_replay_other_offsets_tuple_with_the_same_keys_object_found_all_without_a_walk() -> None:
    """A tail-fed view's new tuple (an offset moved) with the key set it handed before: found all in the
    state's offsets from the second evaluation on, as the same tuple is; another key set starts over."""
    keys = frozenset({("g", T, 0), ("g2", T, 1)})
    moved = (CommittedOffset("g", T, 0, 60, None), OFFS[1])

    def keyed(
        at: float, offsets: tuple[CommittedOffset, ...], ks: frozenset[tuple[str, str, int]]
    ) -> CycleInputs:
        return inputs(committed=replace(poll(at, offsets), keys=ks), tail_live=True)

    s = run(DetectionState(), keyed(1, OFFS, keys), 1)
    assert s.polled == Polled(OFFS, keys) and s.polled.found_in is None
    s = run(s, keyed(2, moved, keys), 2)
    assert s.polled is not None and s.polled.keys is keys and s.polled.found_in is s.commits
    assert s.commits[K].offset == 50  # a live tail's view only seeds: the move is the tail's to tell
    s = run(s, keyed(3, OFFS, frozenset([*keys])), 3)
    assert s.polled is not None and s.polled.found_in is None  # another set: walked again


def test_still_known_tombstone_of_a_polled_key_clears_found_in() -> None:
    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    s = run(s, inputs(commit_events=(commit(None, 3, 1),), tail_live=True), 3)
    assert K not in s.commits and s.polled is not None and s.polled.found_in is None
    assert s.polled.keys == {("g", T, 0), ("g2", T, 1)}


def test_still_known_found_in_other_commits_than_the_states_is_dropped() -> None:
    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    other = replace(s, commits=dict(s.commits))  # another mapping: what the memo says no longer holds
    out = still_known(other, dict(other.commits), set())
    assert out is not None and out.found_in is None and out.keys == s.polled.keys  # type: ignore[union-attr]


def test_replay_state_without_polled_memo_same_replay_as_with_it() -> None:
    """The memo only spares lookups: a state restored without it (never saved) replays the same."""
    s = run(DetectionState(), inputs(committed=poll(1), tail_live=True), 1)
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)
    s = run(s, inputs(commit_events=(commit(None, 3, 1),), tail_live=True), 3)
    step = inputs(committed=poll(4), tail_live=True)
    with_memo, without = replay(s, step), replay(replace(s, polled=None), step)
    assert with_memo.commits == without.commits and with_memo.changed == without.changed == {K}
    assert with_memo.commits[K].offset == 50
    assert s == replace(s, polled=None)  # not compared: it is no part of what detection knows


def test_unknown_offsets_only_those_without_a_point_in_order() -> None:
    more = (*OFFS, CommittedOffset("g3", T, 2, 9, None), CommittedOffset("g", T, 3, 1, None))
    point = CommitPoint(50, None, 1.0, 1.0, "tail", None, None)
    commits = {K: point, CommitKey("g3", T, 2): point}
    assert unknown_offsets(poll(1, more), commits) == [more[1], more[3]]
    assert unknown_offsets(poll(1, more), {CommitKey(*k): point for k in map(_key, more)}) == []


def test_replay_tail_live_poll_seeds_only_the_offsets_it_did_not_know() -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(60, 3, 1),), tail_live=True), 1)
    assert s.commits[K].offset == 60
    s = run(s, inputs(committed=poll(2), tail_live=True), 2)  # polled 50 on K: the tail's 60 stands
    assert s.commits[K].offset == 60 and s.commits[K].source == "tail"
    assert s.commits[CommitKey("g2", T, 1)].offset == 7 and s.commits[CommitKey("g2", T, 1)].source == "poll"


def _key(c: CommittedOffset) -> tuple[str, str, int]:
    return (c.group, c.topic, c.partition)
