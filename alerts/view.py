"""What the detectors of one evaluation share (:class:`View`), derived once from ``(previous, inputs)``.

Every rule reads the same few views of the cycle: the commits replayed over the previous state, the
current partitions, where the offsets sightings and blind spells stand, the broker's offsets retention,
the topics deleted or re-created and the partitions seen again since. :func:`derive` builds them once,
in dependency order; :func:`alerts.engine.evaluate` hands the one view to every detector, to the slow
rules' sweep and to the next state, and none of them derives any of it again. Every evaluation needs
every view (the next state reads them all), so they are built eagerly.

A detector called on its own (tests, tools) derives its view itself: each takes ``view=None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from alerts.blind import Seen, seen
from alerts.commits import Replay, replay
from alerts.current import (
    joined,
    moved_partitions,
    observed_at,
    offsets_retention_seconds,
    ranged_partitions,
    shifted_partitions,
    unranged_partitions,
)
from alerts.recreation import recreations
from alerts.state import CycleInputs, DetectionState, PartitionKey, PartitionPoint, Recreation
from alerts.thresholds import Thresholds
from alerts.topic_change import TopicChange, topic_changes, unconfirmed_resets


@dataclass(frozen=True, slots=True)
class View:
    """One evaluation's shared views. Read-only: every detector of the evaluation gets the same."""

    previous: DetectionState
    inputs: CycleInputs
    replayed: Replay  # this cycle's commits and group changes folded into the previous state
    ranged: Mapping[PartitionKey, PartitionPoint]  # the offsets observation's partitions (log ranges)
    unranged: Mapping[PartitionKey, PartitionPoint]  # those only metadata lists
    partitions: Mapping[PartitionKey, PartitionPoint]  # both: the current partitions
    shifted: frozenset[PartitionKey]  # those whose leader changed or log end went back since previous
    moved: frozenset[PartitionKey] | None  # the ranged ones whose point may have changed (None: any)
    seen: Seen  # the offsets sighting and blind spells after this cycle
    retention_seconds: float  # offsets.retention.minutes as last reported (or the fallback), in seconds
    changes: tuple[TopicChange, ...]  # topics deleted or re-created since the previous state
    unconfirmed: frozenset[PartitionKey]  # log ends gone back under a topic id not told yet
    recreated: Mapping[PartitionKey, Recreation]  # partitions of re-created topics (not pruned yet)

    def observed_at(self, key: PartitionKey) -> float:
        """When ``key``'s point of :attr:`partitions` was observed: the offsets observation's time if it
        lists the partition, else the metadata's."""
        return observed_at(self.inputs, self.ranged, key)


def derive(
    previous: DetectionState, inputs: CycleInputs, thresholds: Thresholds, replayed: Replay | None = None
) -> View:
    """The views of ``inputs`` over ``previous``. ``replayed``: :func:`~alerts.commits.replay` of them if
    the caller has it already (the detection loop replays a cycle to ask for epoch ends, then adds them
    to the inputs: a replay does not read them)."""
    ranged = ranged_partitions(inputs, previous.ranged)
    unranged = unranged_partitions(inputs, ranged)
    partitions = joined(ranged, unranged)
    changes = topic_changes(previous, inputs, partitions)
    moved = moved_partitions(previous, inputs, ranged)
    shifted = shifted_partitions(
        previous, partitions, None if moved is None else moved.union(unranged) if unranged else moved
    )
    return View(
        previous=previous,
        inputs=inputs,
        replayed=replayed if replayed is not None else replay(previous, inputs),
        ranged=ranged,
        unranged=unranged,
        partitions=partitions,
        shifted=shifted,
        moved=moved,
        seen=seen(previous, inputs, thresholds),
        retention_seconds=offsets_retention_seconds(previous, inputs, thresholds),
        changes=changes,
        unconfirmed=unconfirmed_resets(previous, inputs, thresholds, ranged, shifted),
        recreated=recreations(previous, inputs, changes, partitions, partial(observed_at, inputs, ranged)),
    )


def view_of(view: View | None, previous: DetectionState, inputs: CycleInputs, thresholds: Thresholds) -> View:
    """``view`` (an evaluation's), or the view of a detector's own arguments when it is called alone."""
    return view if view is not None else derive(previous, inputs, thresholds)
