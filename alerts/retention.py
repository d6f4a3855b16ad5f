"""``retention_risk``: at the current rates, the log start will pass the group's committed offset soon.

The gap (committed − log start) closes at (log-start advance rate − group consume rate), both measured
over ``rate_window_seconds`` of history kept in the state. Fires when the projected time to loss is
within ``retention_risk_seconds``; a group that already fell below the log start is
``committed_below_log_start`` instead.

The consume rate is measured only since the committed offset last moved back (a rewind or a reset
restarts it: until enough history follows, there is no forecast), and ``messages_at_risk`` never counts
more than the log holds past the committed offset now. Both rates use only samples taken since the last
blind spell (:mod:`alerts.blind`: what happened while offsetguard saw nothing is not a rate), and the
log-start rate only samples since the partition's log last went back (a truncation by a leader change:
the old leader's history says nothing of the new one's) and, after a blind spell, since its first move
(retention catching up on what expired while the brokers were down).

Both values move in steps (retention deletes whole segments, a group commits every few seconds), so a
rate measured between two samples is off by up to a step over the span (:func:`jitter`). A group is
only forecast when the log start outruns it by more than that: on a short-retention topic a group that
keeps up would otherwise be "overtaken" by the phase of the last deleted segment.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from alerts.blind import SETTLE_SECONDS, clean_since
from alerts.current import committed_of, range_history
from alerts.model import RETENTION_RISK, Finding
from alerts.state import (
    CommitKey,
    CycleInputs,
    DetectionState,
    OffsetSample,
    PartitionKey,
    PartitionPoint,
    RangeSample,
    partition_key,
)
from alerts.thresholds import Thresholds
from alerts.view import View, view_of

MIN_SPAN_SECONDS = SETTLE_SECONDS  # shorter histories give rates too noisy to project


def rate(
    points: Sequence[tuple[float, int]], now: float, window: float, min_span: float = MIN_SPAN_SECONDS
) -> float | None:
    """Units per second between the oldest point within ``window`` and the newest (None if they span
    less than ``min_span`` seconds).

    ``points`` are oldest first; the oldest one in the window is found by bisection, so a long history
    costs no more than a short one.
    """
    measured = _window(points, now, window, min_span)
    if measured is None:
        return None
    first, oldest_at = measured
    return (points[-1][1] - points[first][1]) / (points[-1][0] - oldest_at)


def jitter(
    points: Sequence[tuple[float, int]], now: float, window: float, min_span: float = MIN_SPAN_SECONDS
) -> float:
    """How far off :func:`rate` can be when the value moves in steps (retention deletes whole segments,
    a group commits every few seconds): measured between two arbitrary samples of a staircase, a rate
    is off by up to one step over the span. The largest step within the window over the span; O(samples),
    so asked only of a forecast about to fire."""
    measured = _window(points, now, window, min_span)
    if measured is None:
        return 0.0
    first, oldest_at = measured
    step = max(abs(points[i][1] - points[i - 1][1]) for i in range(first + 1, len(points)))
    return step / (points[-1][0] - oldest_at)


def _window(
    points: Sequence[tuple[float, int]], now: float, window: float, min_span: float
) -> tuple[int, float] | None:
    """The index of the oldest point within ``window`` and the time its value held from; None when
    fewer than two points span ``min_span`` seconds."""
    first = bisect_left(points, -window, key=lambda p: p[0] - now)
    if len(points) - first < 2:
        return None
    oldest_at, oldest = points[first]
    if first > 0 and points[first - 1][1] == oldest:
        # The value did not change since before the window (histories keep a run of equal samples as
        # its first and last): it held at the window's start, as a sample taken there would show.
        oldest_at = min(oldest_at, now - window)
    if points[-1][0] - oldest_at < min_span:
        return None
    return first, oldest_at


def _since_last_move_back(samples: list[OffsetSample]) -> list[OffsetSample]:
    """The samples after the committed offset last moved back (a rewind, a reset): a rate measured across
    it would be negative or too low, and project a loss that is not coming."""
    for i in range(len(samples) - 1, 0, -1):
        if samples[i].offset < samples[i - 1].offset:
            return samples[i:]
    return samples


def _log_starts(
    previous: DetectionState, key: PartitionKey, r: PartitionPoint, r_at: float
) -> _LogStarts | None:
    """The log starts to measure a rate over: the partition's range history since its log last went
    back, and this cycle's observation (``r``, at ``r_at``); None when the log start has not moved since
    the oldest sample."""
    kept = previous.ranges.get(key)
    if not kept or kept[0].log_start == r.log_start:
        # the log start only grows: unmoved since the oldest sample, it has no rate here (the oldest is
        # the kept history's, whose newest alone range_history may move on: read only past this test)
        return None
    history: Sequence[RangeSample] = range_history(previous, key)
    if r.log_start is not None and r.log_end is not None:
        history = (*history, RangeSample(r_at, r.log_start, r.log_end))
    return _LogStarts(_since_log_went_back(history))


def _start_rate(
    previous: DetectionState,
    key: PartitionKey,
    r: PartitionPoint,
    r_at: float,
    now: float,
    window: float,
    clean: float | None,
    min_span: float,
) -> tuple[_LogStarts, float, float] | None:
    """The log starts, their positive :func:`rate` and the window it was measured over; None when
    retention is not moving the log start.

    After a blind spell the first move of the log start is not a rate: brokers that were down delete
    everything that expired meanwhile at their first retention check after the restart (minutes of
    deletions at once, right after the spell). The rate is measured from that move on.
    """
    log_starts = _log_starts(previous, key, r, r_at)
    if log_starts is None:
        return None
    if clean is not None:
        moved = _first_move_after(log_starts, clean)
        if moved is None:
            return None  # unmoved since the spell
        window = min(window, now - moved)
    start_rate = rate(log_starts, now, window, min_span)
    if start_rate is None or start_rate <= 0:
        return None
    return log_starts, start_rate, window


def _first_move_after(log_starts: Sequence[tuple[float, int]], clean: float) -> float | None:
    """When the log start first changed after ``clean`` (searched from the newest sample back)."""
    first = None
    for i in range(len(log_starts) - 1, 0, -1):
        at, start = log_starts[i]
        if at <= clean:
            break
        if start != log_starts[i - 1][1]:
            first = at
    return first


def _since_log_went_back(history: Sequence[RangeSample]) -> Sequence[RangeSample]:
    """The samples since the log's start or end last went back (a truncation, a replaced replica)."""
    for i in range(len(history) - 1, 0, -1):
        if history[i].log_end < history[i - 1].log_end or history[i].log_start < history[i - 1].log_start:
            return history[i:]
    return history


class _LogStarts(Sequence[tuple[float, int]]):
    """``(at, log_start)`` of each range sample, read on demand (no copy of a long history)."""

    def __init__(self, history: Sequence[RangeSample]) -> None:
        self._history = history

    def __len__(self) -> int:
        return len(self._history)

    def __getitem__(self, i: int) -> tuple[float, int]:  # type: ignore[override]
        s = self._history[i]
        return (s.at, s.log_start)


def detect_retention_risk(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    found = retention_findings(view_of(view, previous, inputs, thresholds), now, thresholds)
    return tuple(found[key] for key in sorted(found))


def retention_findings(
    view: View, now: float, thresholds: Thresholds, keys: Iterable[CommitKey] | None = None
) -> dict[CommitKey, Finding]:
    """The forecast of each group-partition of ``keys`` (every committed one if None) that has one."""
    previous, inputs = view.previous, view.inputs
    if inputs.offsets is None:
        return {}  # no log range this cycle: nothing to forecast from
    partitions = view.partitions
    window = thresholds.rate_window_seconds
    span = thresholds.rate_min_span_seconds
    clean = clean_since(view.seen.blind_spans)
    if clean is not None:
        window = min(window, now - clean)  # nothing from before the last blind spell
    starts: dict[PartitionKey, tuple[_LogStarts, float, float] | None] = {}
    commits = view.replayed.commits
    pairs = committed_of(commits, keys)
    findings: dict[CommitKey, Finding] = {}
    for key, point in pairs:
        pk = partition_key(key)
        r = partitions.get(pk)
        if r is None or r.log_start is None or point.offset < r.log_start:
            continue
        if r.log_end is not None and r.log_end <= point.offset:
            continue  # nothing unread: retention can delete nothing the group has not read
        if pk not in starts:
            starts[pk] = _start_rate(previous, pk, r, view.observed_at(pk), now, window, clean, span)
        measured = starts[pk]
        if measured is None:
            continue  # the log start is not moving: retention is deleting nothing here
        log_starts, start_rate, start_window = measured
        horizon = thresholds.limits(key.group, key.topic).retention_risk_seconds
        if horizon is None:
            continue
        consumed = _since_last_move_back(
            [*previous.commit_history.get(key, ()), OffsetSample(now, point.offset)]
        )
        consume_rate = rate(consumed, now, window, span)
        if consume_rate is None or start_rate <= consume_rate:
            continue  # too little clean history since a move back, or consuming fast enough
        gap = point.offset - r.log_start
        ttl = gap / (start_rate - consume_rate)
        if ttl > horizon:
            continue
        slack = jitter(log_starts, now, start_window, span) + jitter(consumed, now, window, span)
        if start_rate - consume_rate <= slack:
            continue  # not measurably slower than retention deletes: a step of either could be all of it
        at_risk = round((r.log_start + start_rate * horizon) - (point.offset + consume_rate * horizon))
        if r.log_end is not None:  # only messages the log holds now, unread, are known to be at risk
            at_risk = min(at_risk, r.log_end - point.offset)
        at_risk = max(0, at_risk)
        findings[key] = Finding(
            kind=RETENTION_RISK,
            severity="warning",
            cluster=inputs.cluster,
            group=key.group,
            topic=key.topic,
            partition=key.partition,
            summary=f"retention will pass group {key.group}'s committed {point.offset} on "
            f"{key.topic}[{key.partition}] in ~{ttl / 60:.0f} min at current rates",
            magnitude={"seconds_to_loss": ttl, "messages_at_risk": at_risk},
            evidence={
                "committed": point.offset,
                "log_start": r.log_start,
                "log_end": r.log_end,
                "log_start_rate_per_s": start_rate,
                "consume_rate_per_s": consume_rate,
                "horizon_seconds": horizon,
            },
        )
    return findings
