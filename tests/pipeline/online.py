"""Running the scenario through the online detectors, as the service would (tail events per cycle)."""

from __future__ import annotations

from alerts.engine import evaluate
from alerts.events import to_event
from alerts.model import CommitEvent, Finding, GroupEvent
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from collectors.model import OffsetsObservation, PartitionOffsets
from tests.pipeline.scenario import CLUSTER, CYCLES, T0, tail_batches

KINDS = {
    "offset_rewind": "messages_replayed",
    "offset_skip": "messages_skipped",
    "offsets_lost": "offsets_lost",
    "committed_below_log_start": "messages_lost",
    "committed_beyond_log_end": "beyond",
}


def online_findings() -> list[Finding]:
    state, out = DetectionState(), []
    for cycle, events in zip(CYCLES, tail_batches(), strict=True):
        converted = [to_event(e.cluster, e.partition, e.offset, e.timestamp, e.record) for e in events]
        offsets = None
        if cycle.ranges:
            parts = tuple(PartitionOffsets(t, p, s, e) for (t, p), (s, e) in cycle.ranges.items())
            offsets = OffsetsObservation(CLUSTER, T0 + cycle.now, parts)
        inputs = CycleInputs(
            CLUSTER,
            offsets=offsets,
            commit_events=tuple(e for e in converted if isinstance(e, CommitEvent)),
            group_events=tuple(e for e in converted if isinstance(e, GroupEvent)),
            tail_live=True,
        )
        findings, state = evaluate(state, inputs, T0 + cycle.now, Thresholds())
        out.extend(findings)
    return out


def comparable(findings: list[Finding]) -> set[tuple[str, str, str, int, int]]:
    """Partition-level findings of the kinds the pipeline reports, as (kind, group, topic, partition,
    magnitude); a condition reported on every cycle it lasts counts once."""
    return {
        (f.kind, f.group, f.topic, f.partition, int(f.magnitude[KINDS[f.kind]] or 0))
        for f in findings
        if f.kind in KINDS and f.group is not None and f.topic is not None and f.partition is not None
    }
