"""``offset_skip``: a committed offset jumped forward over messages the group never read.

Only a jump from an offset that had become unfetchable counts (below the log start before the move, or
beyond a truncated log end): a consumer cannot have read past it, so everything between the old offset
and the new one was skipped. Ordinary progress, however large, starts from a fetchable offset.
Causes: ``auto_reset_latest`` (landed on the log end), ``auto_reset_earliest`` (landed on the log start
after retention passed the old offset), ``admin_reset`` (group Empty; info), else ``unknown``.

Also a move BACK from an offset beyond a truncated log end to the log end at reset time
(auto.offset.reset=latest, cause ``auto_reset_latest`` whatever the group state): nothing below the new
log end is re-read (the old messages there were lost by the truncation, see ``log_truncation``), but
what was written between the truncation and the reset is never read: ``messages_skipped = new - log end
right after the truncation`` (critical when > 0, else warning). Not reported as an ``offset_rewind``.
"""

from __future__ import annotations

from alerts.commits import EMPTY, CommitMove, replay
from alerts.current import current_partitions
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
            truncated_end = reset_to_truncated_end(m, history, thresholds)
            if truncated_end is not None:
                findings.append(_reset_after_truncation(inputs.cluster, m, truncated_end, history))
            continue
        reason = old_out_of_range(m, history, thresholds)
        if reason is not None:
            findings.append(_finding(inputs.cluster, m, reason, history))
    return tuple(findings)


def _finding(cluster: str, m: CommitMove, reason: str, history: list[RangeSample]) -> Finding:
    where = landing(m, history)
    if m.group_state == EMPTY and m.protocol_type != "":
        cause = "admin_reset"
    elif where == "log_start":
        cause = "auto_reset_earliest"
    elif where == "log_end":
        cause = "auto_reset_latest"
    else:
        cause = "unknown"
    skipped = m.new.offset - m.old.offset
    if where == "log_start":
        deleted = skipped  # the reset landed on the log start of its time: all of it was deleted unread
    else:
        starts = [s.log_start for s in history if s.at <= m.new.at] or [s.log_start for s in history[:1]]
        deleted = max(0, min(m.new.offset, max(starts, default=m.old.offset)) - m.old.offset)
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
        f"{skipped} messages never read ({cause})",
        cause=cause,
        magnitude={"messages_skipped": skipped, "messages_deleted_unread": deleted},
        evidence=evidence,
    )


def _reset_after_truncation(
    cluster: str, m: CommitMove, truncated_end: int, history: list[RangeSample]
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
        magnitude={"messages_skipped": skipped, "messages_deleted_unread": 0},
        evidence=evidence,
    )
