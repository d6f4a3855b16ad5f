"""``lag_high`` (lag in messages or seconds over the limits) and ``consumer_stalled`` (the committed offset
has not moved while there was lag for ``stall_seconds``).

Lag in seconds is ``now`` minus when the log end first reached ``committed + 1`` (the first unread
message), from the caller's ``log_end_reached_at`` or else the range history kept in the state. A lag of
0 is 0 s; a negative lag (committed beyond the log end) or an unknown time is ``None``, never clamped.

Both limits are judged on the time offsetguard could see (:mod:`alerts.blind`): a blind spell within the
lag or the stall (the cluster down, offsetguard restarting) does not count towards ``lag_seconds`` or
``stall_seconds`` (nobody could commit while the cluster was down), though the lag reported is the whole.

A group-partition judged without a finding is *quiet until* a time (:func:`lag_judgements`): while its
inputs stay (its committed offset, its partition's log range, the blind spells) neither limit can be
passed before it. The lag and the stall measured on visible time grow at most as fast as the clock, so
that time is ``now`` plus what is left to the nearer limit; a lag whose start the caller's clock could not
tell yet (it may tell it later) is quiet only until ``now``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from alerts.blind import blind_seconds
from alerts.current import committed_of, samples
from alerts.model import CONSUMER_STALLED, LAG_HIGH, Evidence, EvidenceValue, Finding
from alerts.state import (
    BlindSpan,
    CommitKey,
    CommitPoint,
    CycleInputs,
    DetectionState,
    PartitionKey,
    PartitionPoint,
    RangeSample,
    partition_key,
)
from alerts.thresholds import Thresholds
from alerts.view import View, view_of


class _History(Sequence[RangeSample]):
    """The partition's range samples plus this cycle's (:func:`alerts.current.samples`), built only if read:
    most lagging group-partitions get their lag seconds from the caller's ``log_end_reached_at``."""

    def __init__(self, view: View, key: PartitionKey, now_point: PartitionPoint) -> None:
        self._args = (view, key, now_point)
        self._built: Sequence[RangeSample] | None = None

    def _list(self) -> Sequence[RangeSample]:
        if self._built is None:
            view, key, now_point = self._args
            self._built = samples(view.previous, key, now_point, view.observed_at(key))
        return self._built

    def __len__(self) -> int:
        return len(self._list())

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        return self._list()[i]

    def __iter__(self) -> Iterator[RangeSample]:
        return iter(self._list())

    def first_at(self) -> float:
        return self._list()[0].at


def reached_at(history: Sequence[RangeSample], offset: int) -> float | None:
    """The first sample at or past ``offset`` after the last one below it (None if none was below)."""
    below = [i for i, s in enumerate(history) if s.log_end < offset]
    if not below:
        return None
    rest = history[below[-1] + 1 :]
    return rest[0].at if rest else None


def lag_seconds(
    inputs: CycleInputs, history: Sequence[RangeSample], key: CommitKey, committed: int, lag: int, now: float
) -> float | None:
    return _lag_seconds(inputs, history, key, committed, lag, now)[0]


def _lag_seconds(
    inputs: CycleInputs, history: Sequence[RangeSample], key: CommitKey, committed: int, lag: int, now: float
) -> tuple[float | None, bool]:
    """:func:`lag_seconds`, and whether its answer stands while the inputs stay: the caller's clock answers
    for good once it answers, while the history's answer (or none) may give way to the clock's later."""
    if lag == 0:
        return 0.0, True
    if lag < 0:
        return None, True
    when = None
    if inputs.log_end_reached_at is not None:
        when = inputs.log_end_reached_at(key.topic, key.partition, committed + 1)
        told = when is not None
    else:
        told = True
    if when is None:
        when = reached_at(history, committed + 1)
    return (None if when is None else now - when), told


def detect_lag(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    """``lag_high`` and ``consumer_stalled`` findings for every committed group-partition."""
    if inputs.offsets is None:
        return ()  # no log end this cycle
    found = lag_findings(view_of(view, previous, inputs, thresholds), now, thresholds)
    return tuple(f for key in sorted(found) for f in found[key])


def lag_findings(
    view: View, now: float, thresholds: Thresholds, keys: Iterable[CommitKey] | None = None
) -> dict[CommitKey, tuple[Finding, ...]]:
    """The findings of each group-partition of ``keys`` (every committed one if None) that has any:
    ``lag_high`` before ``consumer_stalled``. Empty when the cycle has no log end."""
    return lag_judgements(view, now, thresholds, keys)[0]


def lag_judgements(
    view: View, now: float, thresholds: Thresholds, keys: Iterable[CommitKey] | None = None
) -> tuple[dict[CommitKey, tuple[Finding, ...]], dict[CommitKey, float]]:
    """:func:`lag_findings`, and until when each group-partition judged without a finding stays quiet
    while its inputs stay (see the module doc; ``inf``: until they change)."""
    inputs = view.inputs
    if inputs.offsets is None:
        return {}, {}
    partitions = view.partitions
    spans = view.seen.blind_spans
    commits = view.replayed.commits
    pairs = committed_of(commits, keys)
    out: dict[CommitKey, tuple[Finding, ...]] = {}
    quiet: dict[CommitKey, float] = {}
    for key, point in pairs:
        pk = partition_key(key)
        r = partitions.get(pk)
        if r is None or r.log_end is None:
            quiet[key] = _FOREVER
            continue
        lag = r.log_end - point.offset
        if lag <= 0:
            quiet[key] = _FOREVER
            continue  # no lag: neither limit can be passed, nothing is stalled
        found, until = _judge(view, now, thresholds, spans, key, point, pk, r, lag)
        if found:
            out[key] = found
        else:
            quiet[key] = until
    return out, quiet


_FOREVER = float("inf")


def _judge(
    view: View,
    now: float,
    thresholds: Thresholds,
    spans: tuple[BlindSpan, ...],
    key: CommitKey,
    point: CommitPoint,
    pk: PartitionKey,
    r: PartitionPoint,
    lag: int,
) -> tuple[tuple[Finding, ...], float]:
    """The findings, and (none found) until when none can be (see the module doc)."""
    inputs = view.inputs
    limits = thresholds.limits(key.group, key.topic)
    history = _History(view, pk, r)
    secs, told = _lag_seconds(inputs, history, key, point.offset, lag, now)
    until = _FOREVER if told else now
    found: list[Finding] = []
    over_msgs = limits.lag_messages is not None and lag >= limits.lag_messages
    visible = None if secs is None else secs - blind_seconds(spans, now - secs, now)
    over_secs = limits.lag_seconds is not None and visible is not None and visible >= limits.lag_seconds
    if limits.lag_seconds is not None and visible is not None:
        until = min(until, now + limits.lag_seconds - visible)
    if over_msgs or over_secs:
        shown = "unknown" if secs is None else f"{secs:.0f}"
        where = f"{key.topic}[{key.partition}]"
        found.append(
            _finding(
                LAG_HIGH,
                inputs.cluster,
                key,
                f"group {key.group} is {lag} messages / {shown} s behind on {where}",
                lag,
                secs,
                _evidence(point, r, view.observed_at(pk)),
            )
        )
    if limits.stall_seconds is not None:
        # Lag has existed since ``secs`` ago; if unknown, at least since the oldest sample kept.
        lagging = secs if secs is not None else (now - history.first_at() if history else 0.0)
        stuck = min(now - point.moved_at, lagging)
        still = stuck - blind_seconds(spans, now - stuck, now)
        until = min(until, now + limits.stall_seconds - still)
        if still >= limits.stall_seconds:
            found.append(
                _finding(
                    CONSUMER_STALLED,
                    inputs.cluster,
                    key,
                    f"group {key.group}'s committed offset on "
                    f"{key.topic}[{key.partition}] has not moved for {stuck:.0f} s, lag {lag}",
                    lag,
                    secs,
                    {**_evidence(point, r, view.observed_at(pk)), "stalled_seconds": stuck},
                )
            )
    return tuple(found), until


def _evidence(point: CommitPoint, r: PartitionPoint, r_at: float) -> dict[str, EvidenceValue]:
    """A finding's evidence (built only for a finding: most judged group-partitions have none)."""
    return {
        "committed": point.offset,
        "log_end": r.log_end,
        "observed_at": r_at,
        "committed_moved_at": point.moved_at,
    }


def _finding(
    kind: str,
    cluster: str,
    key: CommitKey,
    summary: str,
    lag: int,
    secs: float | None,
    evidence: Evidence,
) -> Finding:
    return Finding(
        kind=kind,
        severity="warning",
        cluster=cluster,
        group=key.group,
        topic=key.topic,
        partition=key.partition,
        summary=summary,
        magnitude={"lag": lag, "lag_seconds": secs},
        evidence=evidence,
    )
