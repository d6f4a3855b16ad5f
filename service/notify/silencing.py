"""Silence matching (pure): which alerts a :class:`~store.notification_records.Silence` holds back.

Matchers follow Alertmanager: ``=``/``!=`` compare exactly, ``=~``/``!~`` match a regular expression
anchored at both ends; an absent label (an alert without a group or topic) is the empty string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from store.alert_records import Alert
from store.notification_records import MATCHER_NAMES, MATCHER_OPS, Matcher, Silence


@lru_cache(maxsize=512)
def _pattern(value: str) -> re.Pattern[str]:
    return re.compile(value)


def check_matcher(m: Matcher) -> None:
    """Raise ``ValueError`` naming what is wrong with ``m`` (unknown label or operator, bad regex)."""
    if m.name not in MATCHER_NAMES:
        raise ValueError(f"matcher label must be one of {', '.join(MATCHER_NAMES)}, not {m.name!r}")
    if m.op not in MATCHER_OPS:
        raise ValueError(f"matcher operator must be one of {', '.join(MATCHER_OPS)}, not {m.op!r}")
    if m.op in ("=~", "!~"):
        try:
            _pattern(m.value)
        except re.error as exc:
            raise ValueError(f"matcher {m.name}{m.op}{m.value!r}: invalid regex: {exc}") from exc


def label(alert: Alert, name: str) -> str:
    value = {"kind": alert.kind, "cluster": alert.cluster, "group": alert.group, "topic": alert.topic}[name]
    return "" if value is None else value


def matcher_matches(m: Matcher, alert: Alert) -> bool:
    value = label(alert, m.name)
    if m.op == "=":
        return value == m.value
    if m.op == "!=":
        return value != m.value
    found = _pattern(m.value).fullmatch(value) is not None
    return found if m.op == "=~" else not found


def silence_matches(silence: Silence, alert: Alert) -> bool:
    """Every matcher matches (a silence without matchers would silence everything: never stored)."""
    return bool(silence.matchers) and all(matcher_matches(m, alert) for m in silence.matchers)


def silenced_by(silences: Iterable[Silence], alert: Alert, now: float) -> Silence | None:
    """The first silence active at ``now`` that matches ``alert``; None if it is not silenced."""
    for silence in silences:
        if silence.status(now) == "active" and silence_matches(silence, alert):
            return silence
    return None
