"""Shared reading of one committed-offset move: was the old offset unfetchable, where did the new one land."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from math import ceil

from alerts.commits import CommitMove
from alerts.current import bracket, near, out_of_range_reason, samples
from alerts.model import EvidenceValue
from alerts.state import DetectionState, PartitionKey, PartitionPoint, RangeSample


def history_for(
    previous: DetectionState, move: CommitMove, partitions: Mapping[PartitionKey, PartitionPoint]
) -> Sequence[RangeSample]:
    key = PartitionKey(move.key.topic, move.key.partition)
    return samples(previous, key, partitions.get(key))


def old_out_of_range(move: CommitMove, history: Sequence[RangeSample]) -> str | None:
    """``below_log_start``/``beyond_log_end`` if the old offset was unfetchable before the move, else None.

    Only samples taken by the time the old offset was last seen count as "before": a sample taken after
    it, even in the same poll cycle, may follow the move (Kafka Streams purges a repartition topic up to
    the offset it has just committed; the purge lands between two polls right after the commit).
    """
    # Since moved_at: re-commits of the same offset (auto-commit) do not hide a truncation seen before them.
    return out_of_range_reason(move.old.offset, move.old.moved_at, move.moved_after, history)


def reset_to_truncated_end(move: CommitMove, history: Sequence[RangeSample]) -> int | None:
    """The log end right after the truncation, when ``move`` is a reset (auto.offset.reset=latest) from an
    old offset left beyond the log end (truncation / re-creation) back to the log end at reset time.

    Such a move re-reads nothing: the offsets between the new and the old one will hold new messages (the
    old ones were lost by the truncation, reported by ``log_truncation``), so it is an ``offset_skip`` of
    what was written between the truncation and the reset, not an ``offset_rewind``.
    """
    if move.new.offset >= move.old.offset or old_out_of_range(move, history) != "beyond_log_end":
        return None
    if landing(move, history) != "log_end":
        return None
    # The first sample (after the old commit) showing the old offset beyond the log end: right after the
    # truncation (the log end only grows from there).
    ends = [s.log_end for s in history if s.at >= move.old.moved_at and move.old.offset > s.log_end]
    return ends[0] if ends else None


PROJECTION_SAMPLES = 5  # samples the growth rate of an unobserved range is estimated from
PROJECTION_MARGIN = 2.0  # growth is uneven: allow twice the rate


def landing(move: CommitMove, history: Sequence[RangeSample]) -> str | None:
    """``log_start`` or ``log_end`` when the new offset is where an auto.offset.reset puts it."""
    before, after = bracket(history, move.new.at)
    if after is None and before is not None:
        # Evaluated before the range was observed again (a tail-seen reset, at once). On the last range
        # observed exactly, it landed there: the projection below is generous (a log start grown by a
        # whole deletion's step can pass an idle log end) and would read a reset to the log end as one
        # to the log start.
        if move.new.offset == before.log_start:
            return "log_start"
        if move.new.offset == before.log_end:
            return "log_end"
        # While retention or producers move the range, the reset landed past the last sample. Project
        # it to the commit.
        after = _projected(history, move.new.at)
    starts = (before.log_start if before else None, after.log_start if after else None)
    ends = (before.log_end if before else None, after.log_end if after else None)
    if near(move.new.offset, *starts):
        return "log_start"
    if near(move.new.offset, *ends):
        return "log_end"
    return None


def _projected(history: Sequence[RangeSample], at: float) -> RangeSample | None:
    """The range at ``at`` extrapolated (generously) from the last few samples: the growth rate over them
    times the margin, and at least their largest single step (retention deletes whole segments)."""
    recent = history[-PROJECTION_SAMPLES:]
    if len(recent) < 2 or recent[-1].at <= recent[0].at:
        return None
    first, last = recent[0], recent[-1]
    span = (at - last.at) * PROJECTION_MARGIN / (last.at - first.at)

    def grown(value: int, start: int, steps: list[int]) -> int:
        return value + max(ceil((value - start) * span), *steps, 0)

    pairs = list(pairwise(recent))
    return RangeSample(
        at,
        grown(last.log_start, first.log_start, [b.log_start - a.log_start for a, b in pairs]),
        grown(last.log_end, first.log_end, [b.log_end - a.log_end for a, b in pairs]),
    )


def move_evidence(move: CommitMove, history: Sequence[RangeSample]) -> dict[str, EvidenceValue]:
    last = history[-1] if history else None
    return {
        "old_offset": move.old.offset,
        "new_offset": move.new.offset,
        "old_leader_epoch": move.old.leader_epoch,
        "new_leader_epoch": move.new.leader_epoch,
        "old_committed_at": move.old.at,
        "new_committed_at": move.new.at,
        "log_start": last.log_start if last else None,
        "log_end": last.log_end if last else None,
        "range_observed_at": last.at if last else None,
        "group_state": move.group_state,
        "old_generation": move.old.generation,
        "new_generation": move.new.generation,
        "source": move.new.source,
    }
