"""Run every detector over one cycle: ``evaluate(previous_state, inputs, now, thresholds)``.

Pure: the same arguments always give the same findings and the same next state. The caller keeps the
returned :class:`~alerts.state.DetectionState` and passes it back next cycle (start with
``DetectionState()``); alert lifecycle, persistence and notification are the caller's business.

One evaluation derives what the detectors share once (:func:`alerts.view.derive`) and hands that view to
each detector, to the slow rules' sweep and to the next state: adding a rule adds no pass over the input.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from typing import Protocol

from alerts.advance import advance
from alerts.cluster_health import (
    detect_cleaner_stalled,
    detect_collector_failures,
    detect_out_of_range_fetches,
)
from alerts.commits import Replay
from alerts.config_risk import detect_config_risks
from alerts.expiry import detect_offsets_expiry_risk
from alerts.lag_alerts import detect_lag
from alerts.log_range import detect_committed_outside_log
from alerts.lost import detect_offsets_lost, loss_outcomes
from alerts.model import Finding
from alerts.retention import detect_retention_risk
from alerts.rewind import detect_offset_rewinds, rewind_outcomes
from alerts.skip import detect_offset_skips
from alerts.state import CycleInputs, DetectionState
from alerts.sweep import judge_slow
from alerts.thresholds import Thresholds
from alerts.topic_events import detect_topic_events
from alerts.truncation import detect_epoch_divergence, detect_log_truncations
from alerts.unclean import detect_unclean_elections
from alerts.view import View, derive


class Detector(Protocol):
    """One rule: this cycle's findings from the previous state and the inputs, read through ``view``
    (the evaluation's; a detector called alone derives its own)."""

    def __call__(
        self,
        previous: DetectionState,
        inputs: CycleInputs,
        now: float,
        thresholds: Thresholds,
        view: View | None = None,
    ) -> tuple[Finding, ...]: ...


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
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    replayed: Replay | None = None,
) -> tuple[tuple[Finding, ...], DetectionState]:
    """All findings of this cycle (in detector order) and the state to keep for the next one.

    ``replayed``: :func:`alerts.commits.replay` of ``(previous, inputs)`` if the caller has it already
    (see :func:`alerts.view.derive`)."""
    view = derive(previous, inputs, thresholds, replayed)
    slow = judge_slow(view, now, thresholds)
    rewinds = rewind_outcomes(previous, inputs, now, thresholds, view)
    losses = loss_outcomes(previous, inputs, now, thresholds, view)
    judged: dict[Detector, tuple[Finding, ...]] = {
        detect_offset_rewinds: rewinds[0],
        detect_offsets_lost: losses[0],
        detect_retention_risk: slow.retention,
        detect_offsets_expiry_risk: slow.expiry,
        detect_lag: slow.lag,
        detect_committed_outside_log: slow.outside,
    }
    # joined in C: a fleet's tens of thousands of firing lag findings are no Python step each
    findings = tuple(
        chain.from_iterable(
            judged[detect] if detect in judged else detect(previous, inputs, now, thresholds, view)
            for detect in DETECTORS
        )
    )
    state = advance(view, now, thresholds, (rewinds[1], losses[1]))
    return findings, replace(state, swept=slow.swept) if slow.swept is not None else state
