"""Unfrozen twins of the state's points, for where one is built for each of thousands of keys an
evaluation: each is filled by plain slot stores, then made the frozen point it stands for by assigning
it that class (the same slots, so the same layout). Never kept as a draft."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class PartitionPointDraft:
    """:class:`~alerts.state.PartitionPoint`'s fields, not frozen: set by plain slot stores where a
    frozen dataclass sets each through ``object.__setattr__`` (3x the cost), then made the point it
    stands for: ``p.__class__ = PartitionPoint``, frozen from then on. For where a point is built for
    each of 20,000 partitions (:func:`alerts.current.ranged_partitions`, when it has no points of the
    last observation to keep)."""

    log_start: int | None
    log_end: int | None
    leader: int | None = None
    leader_epoch: int | None = None
    isr: tuple[int, ...] | None = None
    topic_id: str | None = None


@dataclass(slots=True)
class CommitPointDraft:
    """:class:`~alerts.state.CommitPoint`'s fields, not frozen, made the point it stands for by
    ``p.__class__ = CommitPoint`` (as :class:`PartitionPointDraft`): for the replay of a busy tail, a
    point for each of thousands of commits an evaluation."""

    offset: int
    leader_epoch: int | None
    at: float
    moved_at: float
    source: str
    group_state: str | None = None
    generation: int | None = None
    member_epoch: int | None = None
    expire_at: float | None = None
