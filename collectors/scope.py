"""Which groups and topics of a cluster offsetguard watches: one :class:`Scope` per cluster.

Built once from the cluster's settings (``groups``, ``topics``, ``exclude_pairs``: regular expressions
matched against the whole name) and handed to every source, so a group or topic left out is left out
everywhere alike: never asked about, its ``__consumer_offsets`` records dropped before their value is
decoded, and so never in the store, detection, ``/metrics``, the API or the console. One filter applied
in one path and not another (Burrow #742) is what this object exists to prevent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from collectors.settings import ClusterSettings, NameFilter

# Names repeat every cycle, so answers are memoised; a cluster churning through generated group ids
# (console-consumer-<random>) must not grow the memo without bound.
MEMO_LIMIT = 100_000

_Patterns = tuple[re.Pattern[str], ...]
_K = TypeVar("_K")


def _compiled(patterns: Iterable[str]) -> _Patterns:
    return tuple(re.compile(p) for p in patterns)


def _matches(patterns: _Patterns, name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


@dataclass(frozen=True)
class Scope:
    """Compiled include/exclude patterns of groups and topics, and the excluded (group, topic) pairs.

    A name is in scope when an ``include`` pattern matches it (or there is none) and no ``exclude``
    pattern does: exclude wins. ``pair_in`` is the test for one group's offsets on one topic.
    """

    include_groups: _Patterns = ()
    exclude_groups: _Patterns = ()
    include_topics: _Patterns = ()
    exclude_topics: _Patterns = ()
    exclude_pairs: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = ()
    _groups: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    _topics: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    _pairs: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, cluster: ClusterSettings) -> Scope:
        """The scope ``cluster``'s settings describe (patterns already validated there)."""
        return cls.from_patterns(
            cluster.groups, cluster.topics, [(p.group, p.topic) for p in cluster.exclude_pairs]
        )

    @classmethod
    def from_patterns(
        cls,
        groups: NameFilter | None = None,
        topics: NameFilter | None = None,
        pairs: Sequence[tuple[str, str]] = (),
    ) -> Scope:
        groups = groups or NameFilter()
        topics = topics or NameFilter()
        return cls(
            _compiled(groups.include),
            _compiled(groups.exclude),
            _compiled(topics.include),
            _compiled(topics.exclude),
            tuple((re.compile(g), re.compile(t)) for g, t in pairs),
        )

    @property
    def everything(self) -> bool:
        """Nothing is excluded: sources may skip the checks altogether."""
        return not (
            self.include_groups
            or self.exclude_groups
            or self.include_topics
            or self.exclude_topics
            or self.exclude_pairs
        )

    @property
    def all_topics(self) -> bool:
        """No topic is excluded, for any group (only whole groups may be)."""
        return not (self.include_topics or self.exclude_topics or self.exclude_pairs)

    def group_in(self, group: str) -> bool:
        """Whether ``group`` is watched."""
        memo = self._groups
        known = memo.get(group)
        if known is None:
            known = _in(self.include_groups, self.exclude_groups, group)
            _remember(memo, group, known)
        return known

    def topic_in(self, topic: str) -> bool:
        """Whether ``topic`` is watched (for any group)."""
        memo = self._topics
        known = memo.get(topic)
        if known is None:
            known = _in(self.include_topics, self.exclude_topics, topic)
            _remember(memo, topic, known)
        return known

    def pair_in(self, group: str, topic: str) -> bool:
        """Whether ``group``'s offsets on ``topic`` are watched: both in scope and not an excluded pair."""
        if not self.exclude_pairs:
            return self.group_in(group) and self.topic_in(topic)
        memo = self._pairs
        key = (group, topic)
        known = memo.get(key)
        if known is None:
            known = (
                self.group_in(group)
                and self.topic_in(topic)
                and not any(g.fullmatch(group) and t.fullmatch(topic) for g, t in self.exclude_pairs)
            )
            _remember(memo, key, known)
        return known

    def record_in(self, group: str, topic: str | None) -> bool:
        """Whether a ``__consumer_offsets`` record keyed by ``group`` (and ``topic``, for an offset
        commit) is watched."""
        return self.group_in(group) if topic is None else self.pair_in(group, topic)

    def as_dict(self) -> dict[str, Any]:
        """The patterns, as ``/readyz`` shows them."""
        return {
            "groups": {
                "include": [p.pattern for p in self.include_groups],
                "exclude": [p.pattern for p in self.exclude_groups],
            },
            "topics": {
                "include": [p.pattern for p in self.include_topics],
                "exclude": [p.pattern for p in self.exclude_topics],
            },
            "exclude_pairs": [{"group": g.pattern, "topic": t.pattern} for g, t in self.exclude_pairs],
        }


EVERYTHING = Scope()


def _in(include: _Patterns, exclude: _Patterns, name: str) -> bool:
    return (not include or _matches(include, name)) and not _matches(exclude, name)


def _remember(memo: dict[_K, bool], key: _K, value: bool) -> None:
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value
