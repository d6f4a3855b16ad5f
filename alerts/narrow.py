"""A saved detection state narrowed to a cluster's scope, at start.

Detection never sees a group or topic out of scope: the sources drop them. But a state saved before the
scope left them out still holds their histories, and the first poll without them would read as offsets
lost and topics deleted. :func:`narrow` drops them from the state before the first evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Protocol, TypeVar

from alerts.state import CommitKey, DetectionState, PartitionKey
from collectors.model import OFFSETS_TOPIC

_K = TypeVar("_K")
_V = TypeVar("_V")


class Scope(Protocol):
    """What is asked of a scope (:class:`collectors.scope.Scope` is one)."""

    @property
    def everything(self) -> bool: ...

    def group_in(self, group: str) -> bool: ...

    def topic_in(self, topic: str) -> bool: ...

    def pair_in(self, group: str, topic: str) -> bool: ...


def narrow(state: DetectionState, scope: Scope) -> DetectionState:
    """``state`` without the groups, topics and group-partitions out of ``scope`` (the same object when
    nothing is left out). Runs once per start, so it simply rebuilds every keyed part."""
    if scope.everything:
        return state

    def commit_in(key: CommitKey) -> bool:
        return scope.pair_in(key.group, key.topic)

    def partition_in(key: PartitionKey) -> bool:
        return key.topic == OFFSETS_TOPIC or scope.topic_in(key.topic)  # kept as the metadata keeps it

    narrowed = replace(
        state,
        partitions=_kept(state.partitions, partition_in),
        ranges=_kept(state.ranges, partition_in),
        commits=_kept(state.commits, commit_in),
        commit_history=_kept(state.commit_history, commit_in),
        groups=_kept(state.groups, scope.group_in),
        pending_rewinds=tuple(p for p in state.pending_rewinds if commit_in(p.key)),
        pending_losses=tuple(p for p in state.pending_losses if commit_in(p.key)),
        tombstoned=_kept(state.tombstoned, commit_in),
        recreated=_kept(state.recreated, partition_in),
        swept=None,  # judged over what was dropped: the next evaluation sweeps everything
        ranged=None,  # (a restored state has none; nothing the next evaluation skips rests on it)
    )
    if all(len(getattr(narrowed, p)) == len(getattr(state, p)) for p in _PARTS):
        return state
    return narrowed


_PARTS = (
    "partitions",
    "ranges",
    "commits",
    "commit_history",
    "groups",
    "pending_rewinds",
    "pending_losses",
    "tombstoned",
    "recreated",
)


def _kept(mapping: Mapping[_K, _V], keep: Callable[[_K], bool]) -> dict[_K, _V]:
    return {k: v for k, v in mapping.items() if keep(k)}
