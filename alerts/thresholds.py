"""Alert thresholds: cluster-wide defaults, overridden per topic and then per group (group wins).

The keys of ``topics`` and ``groups`` are regular expressions matched against the whole name (an exact
name matches itself); of several that match, the first in order (the settings file's) wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

MEMO_LIMIT = 100_000  # (group, topic) answers kept; cleared when full (generated group ids churn)
RATE_MIN_SPAN_SECONDS = 60.0  # the default of Thresholds.rate_min_span_seconds


@dataclass(frozen=True, slots=True)
class Limits:
    """The values a group-partition is judged by. ``None`` disables that check."""

    lag_messages: int | None = 10_000
    lag_seconds: float | None = 600.0
    retention_risk_seconds: float | None = 6 * 3600.0  # warn when loss is projected within this
    expiry_risk_seconds: float | None = 24 * 3600.0  # warn when an Empty group's offsets expire within this
    stall_seconds: float | None = 900.0  # committed offset unchanged this long while lag > 0


@dataclass(frozen=True, slots=True)
class Override:
    """Any subset of :class:`Limits`; unset fields (``...``) fall through to the next level."""

    lag_messages: int | object | None = ...
    lag_seconds: float | object | None = ...
    retention_risk_seconds: float | object | None = ...
    expiry_risk_seconds: float | object | None = ...
    stall_seconds: float | object | None = ...

    def apply(self, limits: Limits) -> Limits:
        changes = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not ...}
        return replace(limits, **changes)


@dataclass(frozen=True)
class Thresholds:
    """Everything tunable about detection."""

    default: Limits = field(default_factory=Limits)
    topics: Mapping[str, Override] = field(default_factory=dict)
    groups: Mapping[str, Override] = field(default_factory=dict)
    recommit_window_seconds: float = 30.0  # a rewind undone this fast was a stale (re)commit
    recent_commit_seconds: float = 600.0  # a group that committed this recently is still consuming
    topic_confirm_seconds: float = 60.0  # wait this long for its topic to be seen before a loss pages
    cleaner_stall_seconds: float = 3600.0  # log cleaner time-since-last-run above this is stalled ...
    cleaner_dirty_percent: float = 50.0  # ... when max-dirty-percent is at least this
    offsets_retention_minutes: int = 10080  # used when the broker setting is not observed
    rate_window_seconds: float = 3600.0  # history used for log-start and consume rates
    history_samples: int = 240  # samples kept per partition / group-partition
    # commit_history keeps a group-partition's samples at least this far apart (the newest one is always
    # its latest move); 0: one per evaluation. Consume rates need a long span, not every evaluation.
    history_spacing_seconds: float = 0.0
    # A longer gap between two offsets observations with a log range is a blind spell (alerts.blind);
    # None: no spells (the service sets it from the offsets interval: a sparse series is not blindness).
    blind_gap_seconds: float | None = None
    # The shortest history a rate or forecast is judged from (alerts.retention), so also how long after
    # a blind spell the rate-based kinds cannot judge yet (alerts.blind.settling).
    rate_min_span_seconds: float = RATE_MIN_SPAN_SECONDS
    # The slow rules (lag, stall, retention and expiry forecasts) judge every group-partition at most this
    # often, and in between only those whose inputs changed (alerts.sweep); 0: everything, every time.
    sweep_seconds: float = 0.0
    # answers of limits() by (group, topic): every evaluation asks again for every group-partition
    _memo: dict[tuple[str | None, str | None], Limits] = field(
        init=False, default_factory=dict, compare=False, repr=False
    )

    def limits(self, group: str | None, topic: str | None) -> Limits:
        """The limits for ``group`` on ``topic``: default, then the first topic override whose pattern
        matches, then the first group override whose pattern matches."""
        memo = self._memo
        key = (group, topic)
        out = memo.get(key)
        if out is None:
            out = self.default
            if topic is not None and self.topics:
                found = first_match(self.topics, topic)
                out = found.apply(out) if found is not None else out
            if group is not None and self.groups:
                found = first_match(self.groups, group)
                out = found.apply(out) if found is not None else out
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = out
        return out


def first_match(overrides: Mapping[str, Override], name: str) -> Override | None:
    """The override of the first key equal to ``name`` or, as a regular expression, matching all of it."""
    for key, override in overrides.items():
        if key == name or _fullmatch(key, name):
            return override
    return None


def _fullmatch(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None  # re caches compiled patterns
    except re.error:  # the settings refuse such a key; one built in code stays an exact name
        return False
