"""``offset_skip``: a committed offset jumped forward over messages the group may never have read.

A figure named plainly is certain; one ending in ``_max`` is an upper bound, what happened if the
history the commits cannot rule out did. The commit stream shows where a reset landed, not which way it
went: a reset to the log start read on to the end within one commit looks exactly like a reset to the
log end.

**From below the log start** (retention or delete-records passed the old offset O, new offset N):
``messages_deleted_unread`` D = the log start last observed up to the move - O (certain: never read;
committed_below_log_start reports the same loss). A reset to latest lands on the log end at reset time,
at least E_lo (:func:`alerts.moves.reset_floor`). So:

* N below E_lo, or on the log start and not also on the log end: no reset to latest can land there.
  ``auto_reset_earliest``: ``messages_skipped`` = D, ``messages_read_past`` = N - O - D (read after the
  reset; it includes messages retention deleted after the last observation, which nothing proves unread).
* otherwise the direction is unknown: ``auto_reset_direction_unknown`` (landed on the log end), or
  ``unknown`` (between the ends). ``messages_skipped`` = D (the certain part), ``messages_skipped_max`` =
  N - O (a reset to latest skipped the rest), ``messages_read_past_max`` = N - O - D (a reset to earliest
  read it). Critical (D > 0).
* committed while the group had no members, without a leader epoch (``admin_reset``, info): an operator's
  tool reads nothing on the way, ``messages_skipped`` = N - O exactly.

**From beyond the log end, forward**: only the offsets that held messages count (up to the log end around
the move); none, no finding. ``admin_reset`` or ``unknown`` (a reset to latest from beyond the end moves
back, never forward). Past the log end around the move, nobody read there: ``messages_skipped`` exact,
critical. Within it, the log end may have grown past the old offset before the group fetched there, and it
read on from it (or it reset and read on): nothing certain, warning, ``messages_skipped_max`` = N - the log
end right after the truncation (what a group resuming at the old offset skipped below it, plus the jump).

**Back from beyond a truncated log end** to at or past T, the log end right after the truncation
(:func:`alerts.moves.truncation_under`; below T it is an ``offset_rewind``): a reset to latest lands on
the log end at reset time (at least T) and skipped what was written since the truncation, at most
``messages_skipped_max`` = N - T; a reset to earliest landed on the log start and read to N, re-reading
at most ``messages_replayed_max`` = T - the log start before the truncation. Nothing is certain:
``auto_reset_direction_unknown``, ``messages_skipped`` 0, warning, whatever the group state.

**Forward from a fetchable offset** while the group had no members (and is not a standalone
``assign()`` group), committed without a leader epoch (a consumer's commit carries one, Kafka's tool's
never: :func:`alerts.moves.operator_commit`): an operator's reset (``kafka-consumer-groups
--reset-offsets --to-latest`` on a stopped group), ``admin_reset``, info, ``messages_skipped`` = the
messages between O and N (up to the log end around the move) exactly; none, or no log range observed, no
finding. Seen on the tail before the range is observed again, past the last log end observed: that count
is certain, ``messages_skipped_max`` = N - O. A group with members moving forward is reading: never
reported, nor a standalone group's, nor a commit with a leader epoch. Committed at most
:data:`alerts.moves.LAST_COMMIT_SECONDS` after the group became memberless, it may as well be the
departing member's own last commit (of a client that commits no leader epoch, arriving after its leave):
``member_left_or_admin_reset``, info, ``messages_skipped`` 0, ``messages_skipped_max`` the count above.
"""

from __future__ import annotations

from collections.abc import Sequence

from alerts.commits import CommitMove
from alerts.current import bracket
from alerts.model import OFFSET_SKIP, Finding, Severity
from alerts.moves import (
    LEFT_OR_ADMIN,
    Truncation,
    history_for,
    just_emptied,
    landings,
    move_evidence,
    old_out_of_range,
    operator_commit,
    reset_floor,
    truncation_under,
)
from alerts.state import CycleInputs, DetectionState, RangeSample, partition_key
from alerts.thresholds import Thresholds
from alerts.view import View, view_of

DIRECTION_UNKNOWN = "auto_reset_direction_unknown"


def detect_offset_skips(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    v = view_of(view, previous, inputs, thresholds)
    findings = []
    # a partition's history once for all its groups' moves (a busy tail moves every group each cycle)
    histories: dict[tuple[str, int], Sequence[RangeSample]] = {}
    for m in v.replayed.moves:
        if m.new.offset == m.old.offset:
            continue
        pk = partition_key(m.key)
        history = histories.get(pk)
        if history is None:
            history = histories[pk] = history_for(v, m)
        if m.new.offset < m.old.offset:
            cut = truncation_under(m, history)
            if cut is not None and m.new.offset >= cut.end and _could_matter(m, cut):
                findings.append(_reset_after_truncation(inputs.cluster, m, cut, history))
            continue
        reason = old_out_of_range(m, history)
        if reason is None:
            if operator_commit(m, forward=True):
                existing = _existing_past(m, history)
                if existing is not None and existing > 0:
                    findings.append(_operator_forward(inputs.cluster, m, existing, history))
            continue  # otherwise a consumer's progress
        jumped = m.new.offset - m.old.offset if reason != "beyond_log_end" else _existing_past(m, history)
        if jumped is not None and jumped > 0:
            findings.append(_finding(inputs.cluster, m, reason, jumped, history))
    return tuple(findings)


def _end_around(m: CommitMove, history: Sequence[RangeSample]) -> int:
    """The log end around the move: the larger of the samples either side (-1 without any)."""
    return max((s.log_end for s in bracket(history, m.new.at) if s is not None), default=-1)


def _past_truncation(m: CommitMove, history: Sequence[RangeSample]) -> int:
    """At most skipped by a forward move from beyond the log end landing within the log: from the log end
    the first sample since the old commit showing it beyond shows (right after the truncation) up to the
    new offset: a group that resumed at the old offset skipped the messages written below it."""
    ends = [s.log_end for s in history if s.at >= m.old.moved_at and m.old.offset > s.log_end]
    return min(m.new.offset, _end_around(m, history)) - (ends[0] if ends else m.old.offset)


def _existing_past(m: CommitMove, history: Sequence[RangeSample]) -> int | None:
    """Of the offsets a forward move jumped, how many held messages: up to the log end around the move
    (the larger of the samples either side); None if no sample brackets it. Offsets past the log end
    hold nothing, so a group committing ahead of an empty or truncated log skips nothing
    (``committed_beyond_log_end`` reports where it stands)."""
    ends = [s.log_end for s in bracket(history, m.new.at) if s is not None]
    return min(m.new.offset, max(ends)) - m.old.offset if ends else None


def _finding(
    cluster: str, m: CommitMove, reason: str, jumped: int, history: Sequence[RangeSample]
) -> Finding:
    """``jumped``: the offsets the move passed that held messages (all of them unless from beyond the end)."""
    deleted = _deleted_unread(m, history)
    magnitude: dict[str, int] = {"messages_deleted_unread": deleted}
    if operator_commit(m):
        cause = "admin_reset"
        magnitude |= {"messages_skipped": jumped, "messages_read_past": 0}
    elif reason == "beyond_log_end" and m.new.offset > _end_around(m, history):
        cause = "unknown"  # past the log end: a seek, nothing read from beyond it
        magnitude |= {"messages_skipped": jumped, "messages_read_past": 0}
    elif reason == "beyond_log_end":
        # within the log again: the log end may have passed the old offset before the consumer fetched
        # there (it read on from it, having skipped the truncated end..old), or it reset and read on
        cause = "unknown"
        magnitude |= {"messages_skipped": 0, "messages_skipped_max": _past_truncation(m, history)}
    elif _earliest(m, history):
        cause = "auto_reset_earliest"
        magnitude |= {"messages_skipped": deleted, "messages_read_past": jumped - deleted}
    else:
        cause = DIRECTION_UNKNOWN if "log_end" in landings(m, history) else "unknown"
        magnitude |= {
            "messages_skipped": deleted,
            "messages_skipped_max": jumped,
            "messages_read_past_max": jumped - deleted,
        }
    severity: Severity = (
        "info" if cause == "admin_reset" else "critical" if magnitude["messages_skipped"] > 0 else "warning"
    )
    evidence = move_evidence(m, history)
    evidence["old_offset_was"] = reason
    g, t, p = m.key
    head = f"group {g} jumped {t}[{p}] from unfetchable offset {m.old.offset} to {m.new.offset}: "
    if reason == "beyond_log_end" and "messages_skipped_max" in magnitude:
        summary = (
            f"{head}at most {magnitude['messages_skipped_max']} messages skipped, none for certain: the log "
            f"end may have passed the old offset before the group read on from it ({cause})"
        )
    elif "messages_skipped_max" in magnitude:
        rest = jumped - deleted
        summary = (
            f"{head}{deleted} messages deleted unread; of the {rest} after them, at most {rest} skipped "
            f"(reset to latest) or {rest} read (reset to earliest): direction unknown ({cause})"
        )
    else:
        summary = (
            f"{head}{magnitude['messages_skipped']} messages never read, {deleted} of them deleted unread "
            f"({cause})"
        )
    return Finding(
        kind=OFFSET_SKIP,
        severity=severity,
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=summary,
        cause=cause,
        magnitude=magnitude,
        evidence=evidence,
    )


def _earliest(m: CommitMove, history: Sequence[RangeSample]) -> bool:
    """No reset to latest can have landed on the new offset: below E_lo, or on the log start alone."""
    floor = reset_floor(m, history)
    return (floor is not None and m.new.offset < floor) or landings(m, history) == {"log_start"}


def _deleted_unread(m: CommitMove, history: Sequence[RangeSample]) -> int:
    """Old offset -> the log start last observed up to the move (capped at the new offset): what retention
    (or delete-records) is known to have removed unread. A projected or later log start proves nothing."""
    starts = [s.log_start for s in history if s.at <= m.new.at] or [s.log_start for s in history[:1]]
    return max(0, min(m.new.offset, max(starts, default=m.old.offset)) - m.old.offset)


def _operator_forward(cluster: str, m: CommitMove, skipped: int, history: Sequence[RangeSample]) -> Finding:
    """``skipped``: the messages between the offsets, up to the log end around the move. Seen before the
    range is observed again, the log end may have grown past the last sample by the reset: then that
    count is certain, and the rest of the jump a bound."""
    magnitude = {"messages_skipped": skipped, "messages_deleted_unread": 0, "messages_read_past": 0}
    before, after = bracket(history, m.new.at)
    if after is None and before is not None and before.log_end < m.new.offset:
        magnitude["messages_skipped_max"] = m.new.offset - m.old.offset
    evidence = move_evidence(m, history)
    evidence["old_offset_was"] = "fetchable"
    g, t, p = m.key
    moved = f"{t}[{p}] moved from {m.old.offset} to {m.new.offset}"
    left = just_emptied(m)
    if left is None:
        cause = "admin_reset"
        summary = f"group {g} had no members when {moved}: {skipped} messages never read" + (
            f" (at most {magnitude['messages_skipped_max']})" if "messages_skipped_max" in magnitude else ""
        )
    else:  # the departing member's own last commit (it read them) fits as well as an operator's reset
        cause = LEFT_OR_ADMIN
        bound = magnitude.get("messages_skipped_max", skipped)
        magnitude = {"messages_skipped": 0, "messages_skipped_max": bound, "messages_deleted_unread": 0}
        evidence["left_before_commit_seconds"] = round(left, 3)
        summary = (
            f"group {g} had no members for {left:.1f} s when {moved}: the last member's own commit after "
            f"leaving (it read them) or an operator's reset: at most {bound} messages never read, none for "
            "certain"
        )
    return Finding(
        kind=OFFSET_SKIP,
        severity="info",
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"{summary} ({cause})",
        cause=cause,
        magnitude=magnitude,
        evidence=evidence,
    )


def _could_matter(m: CommitMove, cut: Truncation) -> bool:
    """Whether a reset back from beyond the truncated end could have skipped or re-read anything: not when
    the new offset is the truncated end and nothing was kept below it (a topic re-created under a stale
    commit, an emptied log: every history reads nothing twice and passes nothing)."""
    return m.new.offset > cut.end or cut.end > cut.start_floor


def _reset_after_truncation(
    cluster: str, m: CommitMove, cut: Truncation, history: Sequence[RangeSample]
) -> Finding:
    skipped_max = m.new.offset - cut.end
    replayed_max = max(0, cut.end - cut.start_floor)
    evidence = move_evidence(m, history)
    evidence["old_offset_was"] = "beyond_log_end"
    evidence["log_end_after_truncation"] = cut.end
    evidence["note"] = "committed offset was beyond the log end"
    g, t, p = m.key
    return Finding(
        kind=OFFSET_SKIP,
        severity="warning",
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"group {g} reset {t}[{p}] from {m.old.offset}, beyond the log end (truncated to "
        f"{cut.end}), to {m.new.offset}: at most {skipped_max} messages skipped (reset to latest) or at "
        f"most {replayed_max} re-read (reset to earliest, read on), or neither (resumed at the truncation, "
        f"as a client that checks leader epochs does, KIP-320): direction unknown ({DIRECTION_UNKNOWN})",
        cause=DIRECTION_UNKNOWN,
        magnitude={
            "messages_skipped": 0,
            "messages_skipped_max": skipped_max,
            "messages_replayed_max": replayed_max,
            "messages_deleted_unread": 0,
            "messages_read_past": 0,
        },
        evidence=evidence,
    )
