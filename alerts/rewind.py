"""``offset_rewind``: a committed offset moved backwards, at any lag; the messages in between are re-read.

``messages_replayed`` = old - new, the messages between the two offsets, read again (certain).

Causes, first match wins: ``auto_reset_earliest`` (the old offset had become unfetchable, beyond a
truncated log end, and the new one is the log start), ``admin_reset`` (the group had no members and the
commit carries no leader epoch: an operator's tool; not for standalone groups, which never have members),
``rebalance_recommit`` (a stale member's commit: an older generation / member epoch, or a rewind undone
by a newer commit within ``recommit_window_seconds``), else ``unknown`` (``auto_reset_earliest`` after a
truncation, below).

A tail-seen rewind with no cause yet is reported at once as ``unknown`` (critical either way, so waiting
would only delay the alert) and held in ``DetectionState.pending_rewinds`` for the window: if a newer
commit undoes it in time it is reported again, same fingerprint and same commits, as
``rebalance_recommit``; if the window passes it is dropped without a second report.

After a truncation (the old offset O left beyond the log end, T the log end right after it, see
:func:`alerts.moves.truncation_under`): the offsets T..O held messages the truncation destroyed; the new
ones written there since were never read, so they are not re-read: ``messages_replayed`` = min(O, T) -
new, with evidence ``log_end_after_truncation``. A move to below T is no reset to latest (that lands at
the log end, at least T): ``auto_reset_earliest`` (unless the group had no members, or a stale member
committed). A move back to T or past it is not a rewind: which reset it was is unknown, and
:mod:`alerts.skip` reports it as an ``offset_skip`` (``auto_reset_direction_unknown``).

A move back from an offset re-committed right after the group's offset vanished under a consuming member,
or across its topic's deletion (seen gone, deleted or listed under a new id, after the old commit and by
the new one, :mod:`alerts.recreation`), is ``after_offsets_removed``: a warning with bounds, none re-read
if the old offset was the deleted topic's (or past the new topic's end), at most ``old - new`` if the
topic held them. Across a deletion the range history's end is the new topic's, no truncation under it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from alerts.commits import CommitMove
from alerts.lost import WHILE_CONSUMING
from alerts.membership import consuming
from alerts.model import OFFSET_REWIND, Finding, Severity
from alerts.moves import Truncation, history_for, landing, move_evidence, operator_commit, truncation_under
from alerts.state import (
    CommitKey,
    CycleInputs,
    DetectionState,
    PartitionKey,
    PendingRewind,
    RangeSample,
    Recreation,
)
from alerts.thresholds import Thresholds
from alerts.view import View, view_of

RECOMMIT = "rebalance_recommit"


def detect_offset_rewinds(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    return rewind_outcomes(previous, inputs, now, thresholds, view)[0]


def rewind_outcomes(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[tuple[Finding, ...], tuple[PendingRewind, ...]]:
    """Findings for this cycle and the reported rewinds that a newer commit may still undo."""
    v = view_of(view, previous, inputs, thresholds)
    moves = v.replayed.moves
    window = thresholds.recommit_window_seconds
    findings: list[Finding] = []
    pending: list[PendingRewind] = []

    for p in previous.pending_rewinds:
        held = CommitMove(p.key, p.old, p.new, p.group_state, None, p.new.at)
        undo = _undo(held, moves, window)
        if undo is not None:
            history = history_for(v, held)
            findings.append(_finding(inputs.cluster, held, RECOMMIT, history, undo, None))
        elif now - p.new.at < window:
            pending.append(p)

    removed = _removals(v)
    for i, m in enumerate(moves):
        if m.new.offset >= m.old.offset:
            continue
        history = history_for(v, m)
        cut = truncation_under(m, history)
        if cut is not None and m.new.offset >= cut.end:
            continue  # an offset_skip (direction unknown, from beyond the log end), see alerts.skip
        # across the topic's deletion a log end gone back is the new topic's: no truncation under the move
        gone = _gone_between(m, v.recreated)
        vanished = _vanished_before(m, removed, window) if cut is None else None
        if vanished is not None or gone is not None:
            findings.append(_after_removal(inputs.cluster, m, history, vanished, gone))
            continue
        cause = _cause(m, history, cut)
        undo = None
        if cause is None:
            undo = _undo(m, moves[i + 1 :], window)
            if undo is not None:
                cause = RECOMMIT
            else:
                cause = "unknown"
                if m.new.source == "tail" and now - m.new.at < window:
                    pending.append(PendingRewind(m.key, m.old, m.new, m.group_state))
        findings.append(_finding(inputs.cluster, m, cause, history, undo, cut))
    return tuple(findings), tuple(pending)


def _cause(m: CommitMove, history: Sequence[RangeSample], cut: Truncation | None) -> str | None:
    if cut is not None and landing(m, history) == "log_start":
        return "auto_reset_earliest"
    if operator_commit(m):
        return "admin_reset"
    if m.old.generation is not None and m.new.generation is not None and m.new.generation < m.old.generation:
        return RECOMMIT
    old_epoch, new_epoch = m.old.member_epoch, m.new.member_epoch
    if old_epoch is not None and new_epoch is not None and new_epoch < old_epoch:
        return RECOMMIT
    # below the truncated log end: no reset to latest lands there, and the old offset was unfetchable
    return "auto_reset_earliest" if cut is not None else None


def _removals(v: View) -> dict[CommitKey, list[float]]:
    """When a group-partition's committed offset vanished lately while a member consumed its topic (this
    cycle's removals and the losses still held until their topic is known), or when its topic was seen
    gone (deleted or re-created). Under a consuming member only a topic's deletion removes an offset: the
    coordinator refuses OffsetDelete of a subscribed topic, and an active group's offsets do not expire."""
    out: dict[CommitKey, list[float]] = {}
    for r in v.replayed.removals:
        if consuming(r.group, r.key.topic):
            out.setdefault(r.key, []).append(r.at)
    for loss in v.previous.pending_losses:
        if loss.cause == WHILE_CONSUMING:
            out.setdefault(loss.key, []).append(loss.at)
    gone = v.recreated
    if gone:
        for m in v.replayed.moves:
            seen = gone.get(PartitionKey(m.key.topic, m.key.partition))
            if seen is not None:
                out.setdefault(m.key, []).append(seen.gone_at)
    return out


def _vanished_before(m: CommitMove, removed: dict[CommitKey, list[float]], window: float) -> float | None:
    """When the offset vanished (or its topic went), if within ``window`` before the old commit was made:
    the old offset is then a consumer's position re-committed after its topic was deleted, and what the
    move back re-reads depends on what the topic holds now."""
    times = [at for at in removed.get(m.key, ()) if m.old.at - window <= at <= m.old.at]
    return max(times) if times else None


def _gone_between(m: CommitMove, recreated: Mapping[PartitionKey, Recreation]) -> float | None:
    """When the partition's topic was seen gone (deleted, or listed under a new id), if after the old
    commit and by the new one: the new offset is the re-created topic's, the old one the deleted
    topic's or a position re-committed on the new topic before the metadata poll saw it (the deletion's
    tombstone may have come, and been told, a cycle before: matrix, aiokafka with auto-create on)."""
    entry = recreated.get(PartitionKey(m.key.topic, m.key.partition))
    if entry is not None and m.old.at < entry.gone_at <= m.new.at:
        return entry.gone_at
    return None


def _after_removal(
    cluster: str, m: CommitMove, history: Sequence[RangeSample], vanished: float | None, gone: float | None
) -> Finding:
    """A move back from an offset re-committed right after the group's offset vanished, or across its
    topic's deletion (``gone``: when the topic was seen gone, between the two commits). If the topic was
    deleted and re-created (a consumer or auto-create made it again), the old offset belongs to the
    deleted topic (or lies past the new one's end) and the move is the consumer's reset on the new one:
    nothing re-read. If the topic still holds the old messages (or the new one holds as many), up to
    ``old - new`` are read again. Which, the commits cannot tell; the range history may be the deleted
    topic's."""
    at_most = m.old.offset - m.new.offset
    evidence = move_evidence(m, history)
    after = "across its topic's deletion (seen gone in between)"
    if gone is not None:
        evidence["topic_gone_at"] = gone
    if vanished is not None:
        evidence["offset_vanished_at"] = vanished
        after = "right after its committed offset vanished"
    g, t, p = m.key
    return Finding(
        kind=OFFSET_REWIND,
        severity="warning",
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"group {g} moved {t}[{p}] back from {m.old.offset} to {m.new.offset} {after}: at most "
        f"{at_most} messages re-read if the topic still holds them, none if it was deleted and re-created "
        "(the old offset was the deleted topic's, or past the new topic's end)",
        cause="after_offsets_removed",
        magnitude={"messages_replayed": 0, "messages_replayed_max": at_most},
        evidence=evidence,
    )


def _undo(m: CommitMove, later: tuple[CommitMove, ...], window: float) -> CommitMove | None:
    """A later commit of the same group-partition back at or past the old offset, within the window."""
    for n in later:
        if n.key == m.key and n.new.offset >= m.old.offset and n.new.at - m.new.at <= window:
            return n
    return None


def _finding(
    cluster: str,
    m: CommitMove,
    cause: str,
    history: Sequence[RangeSample],
    undo: CommitMove | None,
    cut: Truncation | None,
) -> Finding:
    replayed = (m.old.offset if cut is None else min(m.old.offset, cut.end)) - m.new.offset
    severity: Severity = "info" if cause == "admin_reset" else "critical"
    evidence = move_evidence(m, history)
    if cut is not None:
        evidence["log_end_after_truncation"] = cut.end
    if undo is not None:
        evidence["undone_by_offset"] = undo.new.offset
        evidence["undone_at"] = undo.new.at
    g, t, p = m.key
    return Finding(
        kind=OFFSET_REWIND,
        severity=severity,
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"group {g} rewound {t}[{p}] from {m.old.offset} to {m.new.offset}: "
        f"{replayed} messages re-read ({cause})",
        cause=cause,
        magnitude={"messages_replayed": replayed},
        evidence=evidence,
    )
