"""``offset_rewind``: a committed offset moved backwards, at any lag; the messages in between are re-read.

Causes, first match wins: ``auto_reset_earliest`` (the old offset had become unfetchable, beyond a
truncated log end, and the new one is the log start; ``auto_reset_latest``, the log end, is a skip: see
below), ``admin_reset`` (the
group had no members: only an operator's tool commits then; not for standalone groups, which never have
members), ``rebalance_recommit`` (a stale
member's commit: an older generation / member epoch, or a rewind undone by a newer commit within
``recommit_window_seconds``), else ``unknown``.

A tail-seen rewind with no cause yet is reported at once as ``unknown`` (critical either way, so waiting
would only delay the alert) and held in ``DetectionState.pending_rewinds`` for the window: if a newer
commit undoes it in time it is reported again, same fingerprint and same commits, as
``rebalance_recommit``; if the window passes it is dropped without a second report.

Not a rewind: a move from an offset beyond a truncated log end back to the log end at reset time
(auto.offset.reset=latest). Nothing below the new log end is re-read, the old messages in between were
lost by the truncation; :mod:`alerts.skip` reports it as an ``offset_skip``.
"""

from __future__ import annotations

from collections.abc import Sequence

from alerts.commits import CommitMove, replay
from alerts.current import current_partitions
from alerts.membership import memberless
from alerts.model import OFFSET_REWIND, Finding, Severity
from alerts.moves import history_for, landing, move_evidence, old_out_of_range, reset_to_truncated_end
from alerts.state import CycleInputs, DetectionState, PendingRewind, RangeSample
from alerts.thresholds import Thresholds

RECOMMIT = "rebalance_recommit"


def detect_offset_rewinds(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[Finding, ...]:
    return rewind_outcomes(previous, inputs, now, thresholds)[0]


def rewind_outcomes(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[tuple[Finding, ...], tuple[PendingRewind, ...]]:
    """Findings for this cycle and the reported rewinds that a newer commit may still undo."""
    moves = replay(previous, inputs).moves
    partitions = current_partitions(inputs)
    window = thresholds.recommit_window_seconds
    findings: list[Finding] = []
    pending: list[PendingRewind] = []

    for p in previous.pending_rewinds:
        held = CommitMove(p.key, p.old, p.new, p.group_state, None, p.new.at)
        undo = _undo(held, moves, window)
        if undo is not None:
            history = history_for(previous, held, partitions)
            findings.append(_finding(inputs.cluster, held, RECOMMIT, history, undo))
        elif now - p.new.at < window:
            pending.append(p)

    for i, m in enumerate(moves):
        if m.new.offset >= m.old.offset:
            continue
        history = history_for(previous, m, partitions)
        if reset_to_truncated_end(m, history) is not None:
            continue  # an offset_skip (auto_reset_latest from beyond the log end), see alerts.skip
        cause = _cause(m, history, thresholds)
        undo = None
        if cause is None:
            undo = _undo(m, moves[i + 1 :], window)
            if undo is not None:
                cause = RECOMMIT
            else:
                cause = "unknown"
                if m.new.source == "tail" and now - m.new.at < window:
                    pending.append(PendingRewind(m.key, m.old, m.new, m.group_state))
        findings.append(_finding(inputs.cluster, m, cause, history, undo))
    return tuple(findings), tuple(pending)


def _cause(m: CommitMove, history: Sequence[RangeSample], thresholds: Thresholds) -> str | None:
    if old_out_of_range(m, history) is not None:
        where = landing(m, history)
        if where == "log_start":
            return "auto_reset_earliest"
        if where == "log_end":
            return "auto_reset_latest"
    if memberless(m.group_state) and m.protocol_type != "":
        return "admin_reset"
    if m.old.generation is not None and m.new.generation is not None and m.new.generation < m.old.generation:
        return RECOMMIT
    old_epoch, new_epoch = m.old.member_epoch, m.new.member_epoch
    if old_epoch is not None and new_epoch is not None and new_epoch < old_epoch:
        return RECOMMIT
    return None


def _undo(m: CommitMove, later: tuple[CommitMove, ...], window: float) -> CommitMove | None:
    """A later commit of the same group-partition back at or past the old offset, within the window."""
    for n in later:
        if n.key == m.key and n.new.offset >= m.old.offset and n.new.at - m.new.at <= window:
            return n
    return None


def _finding(
    cluster: str, m: CommitMove, cause: str, history: Sequence[RangeSample], undo: CommitMove | None
) -> Finding:
    replayed = m.old.offset - m.new.offset
    severity: Severity = "info" if cause == "admin_reset" else "critical"
    evidence = move_evidence(m, history)
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
