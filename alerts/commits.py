"""Replay one cycle's commits over the previous state: the moves and deletions of committed offsets.

With a live tail (``CycleInputs.tail_live``) the truth is the ``__consumer_offsets`` record stream: every
commit, tombstone and classic group transition, in log order, skipping records already seen (the tail
delivers at least once). Without one, moves and deletions are the difference between the previous state
and the polled committed offsets, which cannot see a rewind undone between two polls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from alerts.current import current_groups
from alerts.drafts import CommitPointDraft
from alerts.membership import DEAD, EMPTY, polled_point
from alerts.model import CommitEvent, GroupEvent
from alerts.polled import all_known, still_known, unknown_offsets
from alerts.state import (
    CommitKey,
    CommitPoint,
    CycleInputs,
    DetectionState,
    GroupPoint,
    Polled,
)
from collectors.model import CommittedObservation


@dataclass(frozen=True, slots=True)
class CommitMove:
    """A committed offset changed from ``old`` to ``new``."""

    key: CommitKey
    old: CommitPoint
    new: CommitPoint
    group_state: str | None  # the group's state when ``new`` was committed
    protocol_type: str | None  # "" for a standalone (assign()) group
    moved_after: float  # the move happened after this: the commit time (tail) or the last poll showing old
    state_since: float | None = None  # since when in ``group_state`` (tail-seen, known): GroupPoint.since


@dataclass(slots=True)
class _CommitMoveDraft:
    """:class:`CommitMove`'s fields, not frozen: built, then given that class (see
    :class:`~alerts.drafts.PartitionPointDraft`); never kept as a draft."""

    key: CommitKey
    old: CommitPoint
    new: CommitPoint
    group_state: str | None
    protocol_type: str | None
    moved_after: float
    state_since: float | None = None


@dataclass(frozen=True, slots=True)
class Removal:
    """A committed offset disappeared (a tombstone, or missing from a successful poll)."""

    key: CommitKey
    old: CommitPoint
    at: float
    group_state: str | None
    source: str  # "tombstone" or "poll"
    group: GroupPoint | None = None  # the group (state, members' topics) when the offset disappeared
    tail_live: bool = False  # removed while the live tail delivered every record (its group records too)
    unknown: bool = False  # the group's only known state began after ``at`` (a poll): not the removal's


@dataclass(frozen=True)
class Replay:
    moves: tuple[CommitMove, ...]
    removals: tuple[Removal, ...]
    commits: Mapping[CommitKey, CommitPoint]
    groups: Mapping[str, GroupPoint]
    deleted_groups: frozenset[str]  # group tombstones (DeleteGroups, or an emptied group removed)
    tail_positions: Mapping[int, int]
    tombstoned: Mapping[CommitKey, float]  # see DetectionState.tombstoned (not yet pruned)
    changed: frozenset[CommitKey] = frozenset()  # the keys whose point this replay set or removed
    polled: Polled | None = None  # for the next state (DetectionState.polled)


def replay(previous: DetectionState, inputs: CycleInputs) -> Replay:
    """Fold this cycle's commits and group changes into the previous state (pure)."""
    groups = dict(previous.groups)
    if inputs.groups is not None:
        for info in inputs.groups.groups:
            if info.group_id not in groups:  # first sight: the poll is the best baseline there is
                groups[info.group_id] = polled_point(info, inputs.groups.observed_at)
    commits = dict(previous.commits)
    moves: list[CommitMove] = []
    removals: list[Removal] = []
    deleted: set[str] = set()
    positions = dict(previous.tail_positions)
    tombstoned = dict(previous.tombstoned)
    changed: set[CommitKey] = set()

    records: list[CommitEvent | GroupEvent] = [*inputs.commit_events, *inputs.group_events]
    events = [e for e in records if e.source_offset > previous.tail_positions.get(e.source_partition, -1)]
    events.sort(key=lambda e: (e.source_partition, e.source_offset))
    for e in events:
        positions[e.source_partition] = max(positions.get(e.source_partition, -1), e.source_offset)
        if isinstance(e, GroupEvent):
            _apply_group_event(groups, deleted, e)
            continue
        key = CommitKey(e.group, e.topic, e.partition)
        at = e.commit_timestamp / 1000.0
        old = commits.get(key)
        g = groups.get(e.group)
        # The group as known at the record: one known only since after it (a poll saw it, the tail lags a
        # batch) is unknown there.
        then = g if g is not None and at >= g.since else None
        state = then.state if then is not None else None
        if e.offset is None:
            tombstoned[key] = at
            if old is not None:
                del commits[key]
                changed.add(key)
                unknown = g is not None and then is None
                removals.append(Removal(key, old, at, state, "tombstone", then, inputs.tail_live, unknown))
            continue
        tombstoned.pop(key, None)
        if old is not None and old.source == "poll" and at <= old.at:
            if old.offset == e.offset:
                # The poll saw this commit first, at its own time; the record has the commit's. Expiry is
                # reckoned from it (a later re-commit of the offset, if any, follows in the tail).
                expire_at = e.expire_timestamp / 1000.0 if e.expire_timestamp is not None else old.expire_at
                changed.add(key)
                commits[key] = replace(
                    old, at=at, moved_at=min(old.moved_at, at), source="tail", expire_at=expire_at
                )
            continue  # otherwise the poll already showed a later value; this record is history
        moved = old is None or old.offset != e.offset
        # built as drafts, then given their frozen class: a busy tail brings thousands an evaluation
        draft = CommitPointDraft(
            e.offset,
            e.leader_epoch,
            at,
            at if moved or old is None else old.moved_at,
            "tail",
            state,
            e.generation if e.generation is not None else (then.generation if then else None),
            e.member_epoch,
            e.expire_timestamp / 1000.0 if e.expire_timestamp is not None else None,
        )
        draft.__class__ = CommitPoint  # type: ignore[assignment]  # frozen from here on
        new: CommitPoint = draft  # type: ignore[assignment]
        commits[key] = new
        changed.add(key)
        if old is not None and moved:
            since = then.since if then is not None else None
            move = _CommitMoveDraft(key, old, new, new.group_state, g.protocol_type if g else None, at, since)
            move.__class__ = CommitMove  # type: ignore[assignment]
            moves.append(move)  # type: ignore[arg-type]

    polled = _poll(previous, inputs, commits, moves, removals, groups, tombstoned, changed)
    _apply_polled_groups(inputs, groups)
    for name in deleted:
        if name in groups and groups[name].state == DEAD:
            del groups[name]
    return Replay(
        tuple(moves),
        tuple(removals),
        commits,
        groups,
        frozenset(deleted),
        positions,
        tombstoned,
        frozenset(changed),
        polled,
    )


def _apply_group_event(groups: dict[str, GroupPoint], deleted: set[str], e: GroupEvent) -> None:
    old = groups.get(e.group)
    at = e.timestamp / 1000.0
    if e.state == DEAD:
        deleted.add(e.group)
    state = e.state if e.state is not None else (old.state if old else "Unknown")
    if e.state is None and old is not None and old.state == EMPTY and e.generation != old.generation:
        # A KIP-848 epoch record says membership changed, not how: a group polled Empty may have members
        # now, whose commits must not read as an operator's (alerts.moves.operator_commit).
        state = "Unknown"
    since = old.since if old is not None and old.state == state else at
    generation = e.generation if e.generation is not None else (old.generation if old else None)
    protocol_type = e.protocol_type if e.protocol_type is not None else (old.protocol_type if old else None)
    group_type = old.group_type if old else None
    topics = e.topics if e.state is not None else None  # an epoch record (no state): topics unknown
    groups[e.group] = GroupPoint(state, since, group_type, protocol_type, generation, topics)


def _poll(
    previous: DetectionState,
    inputs: CycleInputs,
    commits: dict[CommitKey, CommitPoint],
    moves: list[CommitMove],
    removals: list[Removal],
    groups: Mapping[str, GroupPoint],
    tombstoned: Mapping[CommitKey, float],
    changed: set[CommitKey],
) -> Polled | None:
    """The polled offsets applied (:func:`_apply_poll`) unless a live tail's poll lists only offsets known
    already; what the next state keeps of them (:class:`~alerts.state.Polled`)."""
    obs = inputs.committed
    if obs is None:
        return still_known(previous, commits, changed)
    if live := inputs.tail_live or obs.under_tail:  # the poll only seeds: the tail had every commit it had
        polled = all_known(obs, previous, commits, changed)
        if polled.found_in is None:
            _apply_poll(obs, live, previous, inputs, commits, moves, removals, groups, tombstoned, changed)
        # else: a live tail's poll only seeds, and every offset it lists is known already
        return polled
    _apply_poll(obs, live, previous, inputs, commits, moves, removals, groups, tombstoned, changed)
    return still_known(previous, commits, changed)


def _apply_poll(
    obs: CommittedObservation,
    live: bool,
    previous: DetectionState,
    inputs: CycleInputs,
    commits: dict[CommitKey, CommitPoint],
    moves: list[CommitMove],
    removals: list[Removal],
    groups: Mapping[str, GroupPoint],
    tombstoned: Mapping[CommitKey, float],
    changed: set[CommitKey],
) -> None:
    at = obs.observed_at
    tail_fed = obs.from_tail
    polled = current_groups(inputs)
    seen: set[tuple[str, str, int]] = set()
    # A CommitKey hashes and compares as its plain tuple: most polled offsets have not moved, and are
    # looked up (and marked seen) without building a key object for each of them.
    lookup: Mapping[tuple[str, str, int], CommitPoint] = commits  # type: ignore[assignment]
    track = not live  # only a poll without the tail judges deletions by what it saw
    offsets = unknown_offsets(obs, commits) if live else obs.offsets  # a live tail's only seeds
    for c in offsets:
        plain = (c.group, c.topic, c.partition)
        if track:
            seen.add(plain)
        old = lookup.get(plain)
        # a commit known from after the poll was sent (the tail's, before it stopped): the poll's is history
        if old is not None and (live or old.offset == c.offset or old.at > at):
            continue
        key = CommitKey(*plain)
        if live and (at <= tombstoned.get(key, float("-inf")) or (tail_fed and key in tombstoned)):
            # taken before the tail's tombstone (a slow poll): history, not a commit to seed; and the tail's
            # own view may be taken after the tombstone was written yet before the tail read it
            continue
        info = polled.get(c.group)
        state = info.state if info else (groups[c.group].state if c.group in groups else None)
        was = previous.groups.get(c.group)
        # Only call a poll-seen move "while Empty" if the group was Empty at both ends of the interval.
        move_state = state if state != EMPTY or (was is not None and was.state == EMPTY) else None
        generation = info.group_epoch if info else None
        new = CommitPoint(c.offset, c.leader_epoch, at, at, "poll", move_state, generation)
        commits[key] = new
        changed.add(key)
        if old is not None:
            ptype = info.protocol_type if info else None
            last_seen = previous.committed_polled_at if previous.committed_polled_at is not None else old.at
            moves.append(CommitMove(key, old, new, move_state, ptype, last_seen))
    if live:
        return
    failed = {f.key for f in obs.failures if f.scope == "group"}
    unseen = obs.unseen_topics()
    fetched = set(obs.groups) - failed
    gone = [k for k, c in commits.items() if k not in seen and c.at <= at]  # not committed after the poll
    for key in [k for k in gone if k.group in fetched and k.topic not in unseen]:
        info = polled.get(key.group)
        known = groups.get(key.group)
        since = known.since if known is not None and info is not None and known.state == info.state else at
        group = polled_point(info, since) if info else None
        removals.append(Removal(key, commits.pop(key), at, info.state if info else None, "poll", group))
        changed.add(key)


def _apply_polled_groups(inputs: CycleInputs, groups: dict[str, GroupPoint]) -> None:
    if inputs.groups is None:
        return
    obs = inputs.groups
    failed = {f.key for f in obs.failures if f.scope == "group"}
    listed = {g.group_id for g in obs.groups}
    for info in obs.groups:
        old = groups.get(info.group_id)
        if old is not None and old.since > obs.observed_at:
            continue  # a tail record newer than this poll already told us more
        since = old.since if old is not None and old.state == info.state else obs.observed_at
        groups[info.group_id] = polled_point(info, since)
    if not failed and not obs.failures and not inputs.tail_live:
        # Not listed: gone, unless a tail record newer than the poll says it exists (it joined after the
        # poll listed the groups; a slow poll is evaluated after the tail's news). With the tail live its
        # tombstones say which groups are deleted, and a listing is not trusted for that: ListGroups
        # answers nothing, without an error, for the groups of a coordinator that is moving or loading
        # (a broker restart), so active groups "vanished" and their offsets looked due to expire (soak).
        for name in [n for n, g in groups.items() if n not in listed and g.since <= obs.observed_at]:
            del groups[name]
