"""``retention_risk``: at the current rates, the log start will pass the group's committed offset soon.

The gap (committed − log start) closes at (log-start advance rate − group consume rate), both measured
over ``rate_window_seconds`` of history kept in the state. Fires when the projected time to loss is
within ``retention_risk_seconds``; a group that already fell below the log start is
``committed_below_log_start`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from alerts.commits import replay
from alerts.current import current_partitions, samples
from alerts.model import RETENTION_RISK, Finding
from alerts.state import CycleInputs, DetectionState, OffsetSample, PartitionKey
from alerts.thresholds import Thresholds

MIN_SPAN_SECONDS = 60.0  # shorter histories give rates too noisy to project


def rate(points: Sequence[tuple[float, int]], now: float, window: float) -> float | None:
    """Units per second between the oldest point within ``window`` and the newest (None if too short)."""
    recent = [p for p in points if now - p[0] <= window]
    if len(recent) < 2 or recent[-1][0] - recent[0][0] < MIN_SPAN_SECONDS:
        return None
    return (recent[-1][1] - recent[0][1]) / (recent[-1][0] - recent[0][0])


def detect_retention_risk(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[Finding, ...]:
    partitions = current_partitions(inputs)
    window = thresholds.rate_window_seconds
    findings = []
    for key, point in sorted(replay(previous, inputs).commits.items()):
        horizon = thresholds.limits(key.group, key.topic).retention_risk_seconds
        pk = PartitionKey(key.topic, key.partition)
        r = partitions.get(pk)
        if horizon is None or r is None or r.log_start is None or point.offset < r.log_start:
            continue
        start_rate = rate([(s.at, s.log_start) for s in samples(previous, pk, r)], now, window)
        consumed = [*previous.commit_history.get(key, ()), OffsetSample(now, point.offset)]
        consume_rate = rate(consumed, now, window)
        if start_rate is None or consume_rate is None or start_rate <= consume_rate:
            continue
        gap = point.offset - r.log_start
        ttl = gap / (start_rate - consume_rate)
        if ttl > horizon:
            continue
        at_risk = max(
            0, round((r.log_start + start_rate * horizon) - (point.offset + consume_rate * horizon))
        )
        findings.append(
            Finding(
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
        )
    return tuple(findings)
