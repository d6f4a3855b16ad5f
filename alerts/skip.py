"""``offset_skip``: a committed offset jumped forward over messages the group never read.

Only a jump from an offset that had become unfetchable counts (below the log start before the move, or
beyond a truncated log end): a consumer cannot have read from it. Ordinary progress, however large,
starts from a fetchable offset. Causes: ``auto_reset_latest`` (landed on the log end),
``auto_reset_earliest`` (landed on the log start after retention passed the old offset), ``admin_reset``
(committed while the group had no members: an operator's tool; info), else ``unknown``.

Magnitudes count only what is known lost or skipped. A jump from below the log start splits at the log
start last observed before the move: ``messages_deleted_unread`` = that log start - old offset (never
more: committed_below_log_start reports the same loss), and the rest, up to the new offset, was
``messages_read_past`` when the group reset to the earliest offset and read on (``auto_reset_earliest``,
``unknown``; it includes messages retention deleted after that observation, which nothing proves were
unread), or skipped by a reset to the log end or by an operator (``auto_reset_latest``, ``admin_reset``:
``messages_read_past`` 0). ``messages_skipped`` = new - old - ``messages_read_past``: never read. A
jump from beyond the log end counts only the offsets that held messages (up to the log end around the
move); none, no finding.

Also a move BACK from an offset beyond a truncated log end to the log end at reset time
(auto.offset.reset=latest, cause ``auto_reset_latest`` whatever the group state): nothing below the new
log end is re-read (the old messages there were lost by the truncation, see ``log_truncation``), but
what was written between the truncation and the reset is never read: ``messages_skipped = new - log end
right after the truncation`` (critical when > 0, else warning). Not reported as an ``offset_rewind``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alerts.commits import CommitMove, replay
from alerts.current import bracket, current_partitions
from alerts.membership import memberless
from alerts.model import OFFSET_SKIP, Finding, Severity
from alerts.moves import history_for, landing, move_evidence, old_out_of_range, reset_to_truncated_end
from alerts.state import CycleInputs, DetectionState, RangeSample
from alerts.thresholds import Thresholds


def detect_offset_skips(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[Finding, ...]:
    partitions = current_partitions(inputs)
    findings = []
    for m in replay(previous, inputs).moves:
        if m.new.offset == m.old.offset:
            continue
        history = history_for(previous, m, partitions)
        if m.new.offset < m.old.offset:
            truncated_end = reset_to_truncated_end(m, history)
            if truncated_end is not None:
                findings.append(_reset_after_truncation(inputs.cluster, m, truncated_end, history))
            continue
        reason = old_out_of_range(m, history)
        if reason is None:
            continue
        jumped = m.new.offset - m.old.offset if reason != "beyond_log_end" else _existing_past(m, history)
        if jumped > 0:
            findings.append(_finding(inputs.cluster, m, reason, jumped, history))
    return tuple(findings)


def _existing_past(m: CommitMove, history: Sequence[RangeSample]) -> int:
    """Of the offsets a forward move from beyond the log end jumped, how many held messages: up to the log
    end around the move (the larger of the samples either side). Offsets past the log end hold nothing, so
    a group committing ahead of an empty or truncated log skips nothing (``committed_beyond_log_end``
    reports where it stands)."""
    ends = [s.log_end for s in bracket(history, m.new.at) if s is not None]
    return min(m.new.offset, max(ends, default=m.old.offset)) - m.old.offset


def _finding(
    cluster: str, m: CommitMove, reason: str, jumped: int, history: Sequence[RangeSample]
) -> Finding:
    """``jumped``: the offsets the move passed that held messages (all of them unless from beyond the end)."""
    where = landing(m, history)
    if memberless(m.group_state) and m.protocol_type != "":
        cause = "admin_reset"
    elif where == "log_start":
        cause = "auto_reset_earliest"
    elif where == "log_end":
        cause = "auto_reset_latest"
    else:
        cause = "unknown"
    deleted = _deleted_unread(m, history)
    read_on = reason == "below_log_start" and cause in ("auto_reset_earliest", "unknown")
    read_past = jumped - deleted if read_on else 0
    skipped = jumped - read_past
    severity: Severity = "info" if cause == "admin_reset" else "critical"
    evidence = move_evidence(m, history)
    evidence["old_offset_was"] = reason
    g, t, p = m.key
    return Finding(
        kind=OFFSET_SKIP,
        severity=severity,
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"group {g} jumped {t}[{p}] from unfetchable offset {m.old.offset} to {m.new.offset}: "
        f"{skipped} messages never read, {deleted} of them deleted unread ({cause})",
        cause=cause,
        magnitude={
            "messages_skipped": skipped,
            "messages_deleted_unread": deleted,
            "messages_read_past": read_past,
        },
        evidence=evidence,
    )


def _deleted_unread(m: CommitMove, history: Sequence[RangeSample]) -> int:
    """Old offset -> the log start last observed up to the move (capped at the new offset): what retention
    (or delete-records) is known to have removed unread. A projected or later log start proves nothing."""
    starts = [s.log_start for s in history if s.at <= m.new.at] or [s.log_start for s in history[:1]]
    return max(0, min(m.new.offset, max(starts, default=m.old.offset)) - m.old.offset)


def _reset_after_truncation(
    cluster: str, m: CommitMove, truncated_end: int, history: Sequence[RangeSample]
) -> Finding:
    skipped = max(0, m.new.offset - truncated_end)
    severity: Severity = "critical" if skipped > 0 else "warning"
    evidence = move_evidence(m, history)
    evidence["old_offset_was"] = "beyond_log_end"
    evidence["log_end_after_truncation"] = truncated_end
    evidence["note"] = "committed offset was beyond the log end"
    g, t, p = m.key
    return Finding(
        kind=OFFSET_SKIP,
        severity=severity,
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"group {g} reset {t}[{p}] from {m.old.offset}, beyond the log end (truncated to "
        f"{truncated_end}), to the log end {m.new.offset}: {skipped} messages never read (auto_reset_latest)",
        cause="auto_reset_latest",
        magnitude={"messages_skipped": skipped, "messages_deleted_unread": 0, "messages_read_past": 0},
        evidence=evidence,
    )
