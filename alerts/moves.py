"""Shared reading of one committed-offset move: was the old offset unfetchable, where did the new one land."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from math import ceil

from alerts.commits import CommitMove
from alerts.current import bracket, near, out_of_range_reason, samples
from alerts.membership import memberless
from alerts.model import EvidenceValue
from alerts.state import PartitionKey, RangeSample
from alerts.view import View


def history_for(view: View, move: CommitMove) -> Sequence[RangeSample]:
    """The range history of ``move``'s partition, ending with its current observation if any."""
    key = PartitionKey(move.key.topic, move.key.partition)
    point = view.partitions.get(key)
    return samples(view.previous, key, point, view.observed_at(key) if point is not None else 0.0)


def old_out_of_range(move: CommitMove, history: Sequence[RangeSample]) -> str | None:
    """``below_log_start``/``beyond_log_end`` if the old offset was unfetchable before the move, else None.

    Only samples taken by the time the old offset was last seen count as "before": a sample taken after
    it, even in the same poll cycle, may follow the move (Kafka Streams purges a repartition topic up to
    the offset it has just committed; the purge lands between two polls right after the commit).
    """
    # Since moved_at: re-commits of the same offset (auto-commit) do not hide a truncation seen before them.
    return out_of_range_reason(move.old.offset, move.old.moved_at, move.moved_after, history)


@dataclass(frozen=True, slots=True)
class Truncation:
    """What the range history shows of the truncation that left an old committed offset beyond the log
    end: ``end``, the log end the first sample after it shows (T: a reset to latest lands at or past
    it); ``start_floor``, the largest log start sampled before it, or 0 (a reset to earliest, which
    follows the truncation, lands at or past it)."""

    end: int
    start_floor: int


def truncation_under(move: CommitMove, history: Sequence[RangeSample]) -> Truncation | None:
    """The truncation under ``move`` when it goes back from an old offset left beyond the log end
    (truncation / re-creation): the offsets from the truncated log end up to the old offset held
    messages the truncation destroyed, and the ones written there since were never read. See
    :mod:`alerts.skip` (new offset at or past the truncated end: which reset is unknown) and
    :mod:`alerts.rewind` (below it: a reset to the log start, ``min(old, end) - new`` re-read)."""
    if move.new.offset >= move.old.offset or old_out_of_range(move, history) != "beyond_log_end":
        return None
    # The first sample (after the old commit) showing the old offset beyond the log end: right after the
    # truncation (the log end only grows from there).
    first = next((s for s in history if s.at >= move.old.moved_at and move.old.offset > s.log_end), None)
    if first is None:
        return None
    floor = max((s.log_start for s in history if s.at < first.at), default=0)
    return Truncation(first.log_end, floor)


def reset_floor(move: CommitMove, history: Sequence[RangeSample]) -> int | None:
    """E_lo: the least log end a reset to latest of ``move`` (from below the log start) can have landed
    on, the largest log end sampled before the reset; None if no sample is known to precede it.

    A sample precedes the reset if it still shows the old offset fetchable (the log start only grows:
    the consumer's fetch there could not fail yet), or if it was taken by the time the old offset was
    last committed on the tail (the consumer was still there then). A poll's time is not a commit's:
    the consumer may have reset before the poll still showed the old offset.
    """
    old, new = move.old, move.new
    tail = old.source == "tail"
    ends = [
        s.log_end
        for s in history
        if s.at <= new.at and (s.log_start <= old.offset or (tail and s.at <= old.at))
    ]
    return max(ends, default=None)


def operator_commit(move: CommitMove, *, forward: bool = False) -> bool:
    """``move`` was committed while the group had no members: an operator's tool (not a standalone
    ``assign()`` group, which never has members). ``forward``: a move a consumer's progress could also
    make, so the group must be known memberless all along: a tail-seen commit (its group records say
    the state at that commit), or a poll-seen one whose group epoch did not change (a classic group's
    poll has none: a batch job may have joined, read and left between two polls).

    A move committed with a leader epoch is a consumer's, never an operator's: Kafka's reset tool
    (``kafka-consumer-groups --reset-offsets``, every mode) commits an offset alone, a consumer the leader
    epoch of the last record it fetched (KIP-320: the Java consumer, librdkafka, kafka-python). It is the
    departing member's own last commit however long after its leave it arrives (librdkafka's close commit
    came over a second after its LeaveGroup on a loaded machine), or an ``assign()`` reader's."""
    if not memberless(move.group_state) or move.protocol_type == "":
        return False
    if move.new.leader_epoch is not None:
        return False
    if not forward or move.new.source == "tail":
        return True
    return move.old.generation is not None and move.old.generation == move.new.generation


# A consumer leaving its group may commit its position just after the leave (a KIP-848 Java consumer's
# last commit can reach the coordinator after its leave, sent without the member epoch): a commit this
# soon after the group became memberless may be that member's own, not an operator's (one carrying a
# leader epoch is a consumer's at any time, see operator_commit; this is for clients that send none).
LAST_COMMIT_SECONDS = 1.0
LEFT_OR_ADMIN = "member_left_or_admin_reset"  # the offset_skip cause then


def just_emptied(move: CommitMove) -> float | None:
    """Seconds from the group becoming memberless to ``move``'s commit when at most
    :data:`LAST_COMMIT_SECONDS` (a group polled memberless may have become so earlier: the figure is a
    lower bound, and the move counts as just after whenever it may be); None otherwise."""
    since = move.state_since
    if since is None or not memberless(move.group_state):
        return None
    after = move.new.at - since
    return max(after, 0.0) if after <= LAST_COMMIT_SECONDS else None


PROJECTION_SAMPLES = 5  # samples the growth rate of an unobserved range is estimated from
PROJECTION_MARGIN = 2.0  # growth is uneven: allow twice the rate


def landing(move: CommitMove, history: Sequence[RangeSample]) -> str | None:
    """``log_start`` or ``log_end`` when the new offset is where an auto.offset.reset puts it (the log
    start when it could be both)."""
    where = landings(move, history)
    return "log_start" if "log_start" in where else "log_end" if "log_end" in where else None


def landings(move: CommitMove, history: Sequence[RangeSample]) -> frozenset[str]:
    """Where an auto.offset.reset could have put the new offset: ``log_start``, ``log_end``, both (the
    ranges around the move overlap, an empty log), or neither."""
    before, after = bracket(history, move.new.at)
    if after is None and before is not None:
        # Evaluated before the range was observed again (a tail-seen reset, at once). On the last range
        # observed exactly, it landed there: the projection below is generous (a log start grown by a
        # whole deletion's step can pass an idle log end) and would read a reset to the log end as one
        # to the log start.
        exact = frozenset(
            name
            for name, value in (("log_start", before.log_start), ("log_end", before.log_end))
            if move.new.offset == value
        )
        if exact:
            return exact
        # While retention or producers move the range, the reset landed past the last sample. Project
        # it to the commit.
        after = _projected(history, move.new.at)
    starts = (before.log_start if before else None, after.log_start if after else None)
    ends = (before.log_end if before else None, after.log_end if after else None)
    found = set()
    if near(move.new.offset, *starts):
        found.add("log_start")
    if near(move.new.offset, *ends):
        found.add("log_end")
    return frozenset(found)


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
