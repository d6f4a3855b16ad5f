"""Blind spells: spans in which offsetguard saw no log range of the cluster (brokers down, the offsets
collector failing, offsetguard itself stopped or restarting).

A spell is known once it ends: the first offsets observation after a gap longer than
``Thresholds.blind_gap_seconds`` closes it as ``BlindSpan(last seen before, first seen after)``. Rules
that measure time or rates use them so that what offsetguard could not see is not read as something
that happened:

- rates and forecasts use only samples taken after the last spell ended (:func:`clean_since`);
- durations judged against a limit (lag seconds, a stalled commit) leave out the blind time within them
  (:func:`blind_seconds`): consumers cannot commit, nor producers produce, while the cluster is down;
- right after a spell the rate-based kinds cannot be judged yet (:func:`settling`): a firing alert of
  those kinds is neither resolved nor refreshed until clean observations decide it.
"""

from __future__ import annotations

from typing import NamedTuple

from alerts.state import BlindSpan, CycleInputs, DetectionState
from alerts.thresholds import RATE_MIN_SPAN_SECONDS, Thresholds

MAX_SPANS = 16  # spells remembered; older ones no longer overlap anything a rule measures
# The shortest history a rate is judged from (alerts.retention), so also how long after a spell the rates
# cannot judge yet: the default of ``Thresholds.rate_min_span_seconds`` (detection.rate_min_span_seconds).
SETTLE_SECONDS = RATE_MIN_SPAN_SECONDS


class Seen(NamedTuple):
    """Where the offsets observations stand after this cycle."""

    offsets_seen_at: float | None
    blind_spans: tuple[BlindSpan, ...]


def _sees_ranges(inputs: CycleInputs) -> bool:
    """The cycle brought at least one complete log range (an observation of failures only is blind)."""
    offsets = inputs.offsets
    return offsets is not None and any(
        p.log_start is not None and p.log_end is not None for p in offsets.partitions
    )


def seen(previous: DetectionState, inputs: CycleInputs, thresholds: Thresholds) -> Seen:
    """``previous``'s offsets sighting and spells with this cycle's observation folded in."""
    if not _sees_ranges(inputs):
        return Seen(previous.offsets_seen_at, previous.blind_spans)
    assert inputs.offsets is not None
    at = inputs.offsets.observed_at
    last = previous.offsets_seen_at
    spans = previous.blind_spans
    gap = thresholds.blind_gap_seconds
    if last is not None and gap is not None and at - last > gap:
        spans = (*spans, BlindSpan(last, at))[-MAX_SPANS:]
    return Seen(max(at, last) if last is not None else at, spans)


def clean_since(spans: tuple[BlindSpan, ...]) -> float | None:
    """When the last blind spell ended (None: none is remembered)."""
    return spans[-1].end if spans else None


def blind_seconds(spans: tuple[BlindSpan, ...], start: float, end: float) -> float:
    """Seconds of ``[start, end]`` that fall in a blind spell."""
    if not spans:
        return 0  # what sum() of nothing is; the common case, asked per lagging group-partition
    return sum(max(0.0, min(end, s.end) - max(start, s.start)) for s in spans)


def settling(spans: tuple[BlindSpan, ...], now: float, settle: float = SETTLE_SECONDS) -> bool:
    """The last spell ended less than ``settle`` seconds ago (``Thresholds.rate_min_span_seconds``)."""
    since = clean_since(spans)
    return since is not None and now - since < settle
