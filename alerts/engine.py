"""Run every detector over one cycle: ``evaluate(previous_state, inputs, now, thresholds)``.

Pure: the same arguments always give the same findings and the same next state. The caller keeps the
returned :class:`~alerts.state.DetectionState` and passes it back next cycle (start with
``DetectionState()``); alert lifecycle, persistence and notification are the caller's business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from alerts import memo
from alerts.advance import advance
from alerts.cluster_health import (
    detect_cleaner_stalled,
    detect_collector_failures,
    detect_out_of_range_fetches,
)
from alerts.config_risk import detect_config_risks
from alerts.expiry import detect_offsets_expiry_risk
from alerts.lag_alerts import detect_lag
from alerts.log_range import detect_committed_outside_log
from alerts.lost import detect_offsets_lost
from alerts.model import Finding
from alerts.retention import detect_retention_risk
from alerts.rewind import detect_offset_rewinds
from alerts.skip import detect_offset_skips
from alerts.state import CycleInputs, DetectionState
from alerts.sweep import judge_slow
from alerts.thresholds import Thresholds
from alerts.topic_events import detect_topic_events
from alerts.truncation import detect_epoch_divergence, detect_log_truncations
from alerts.unclean import detect_unclean_elections

Detector = Callable[[DetectionState, CycleInputs, float, Thresholds], tuple[Finding, ...]]

DETECTORS: tuple[Detector, ...] = (
    detect_offset_rewinds,
    detect_offset_skips,
    detect_committed_outside_log,
    detect_log_truncations,
    detect_topic_events,
    detect_unclean_elections,
    detect_offsets_lost,
    detect_epoch_divergence,
    detect_retention_risk,
    detect_offsets_expiry_risk,
    detect_lag,
    detect_cleaner_stalled,
    detect_out_of_range_fetches,
    detect_config_risks,
    detect_collector_failures,
)


def evaluate(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[tuple[Finding, ...], DetectionState]:
    """All findings of this cycle (in detector order) and the state to keep for the next one."""
    try:
        slow = judge_slow(previous, inputs, now, thresholds)
        judged = {
            detect_retention_risk: slow.retention,
            detect_offsets_expiry_risk: slow.expiry,
            detect_lag: slow.lag,
            detect_committed_outside_log: slow.outside,
        }
        findings = tuple(
            f
            for detect in DETECTORS
            for f in (judged[detect] if detect in judged else detect(previous, inputs, now, thresholds))
        )
        state = advance(previous, inputs, now, thresholds)
        return findings, replace(state, swept=slow.swept) if slow.swept is not None else state
    finally:
        memo.release()
