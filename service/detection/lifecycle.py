"""Alert lifecycle rules: one cycle's findings against the firing alerts -> the changes to store (pure).

* One firing alert per fingerprint ``(kind, cluster, group, topic, partition)``; a finding for a firing
  fingerprint updates it (``updated_at``, summary, evidence, latest ``magnitude``).
* **Event-like** kinds (rewind, skip, truncation, unclean election, offsets lost): each distinct occurrence
  (its evidence without the volatile fields) counts once: ``occurrences`` +1, ``magnitude_total`` adds
  its magnitude, severity is the highest seen. The *same* occurrence reported again (a rewind re-classified
  as ``rebalance_recommit``, a tail record delivered twice) replaces the latest magnitude, cause and
  severity without counting again. They stay firing until acknowledged or until ``quiet_period_seconds``
  pass without a new report.
* **State-like** kinds: latest severity, cause and magnitude (``magnitude_total`` = latest); resolved after
  ``resolve_after_clean`` consecutive evaluations that had the kind's input and did not report it.
  Unchanged severity/cause are re-written at most every ``refresh_seconds`` (a silent refresh: magnitude,
  summary and evidence), and at most ``refresh_limit`` of them an evaluation, those refreshed longest ago
  first: a fleet's tens of thousands of firing lag alerts are refreshed in turn (32,000 every 5-11 min at
  an evaluation every 2.5-5 s) instead of all at once every 30 s, which cost more than everything else
  the service does together. A refresh changes no state (the alert's ``updated_at`` says when its figures
  were taken; the live ones are in ``/metrics``); a change of severity or cause, a new alert and a
  resolution are always written at once.
"""

from __future__ import annotations

import heapq
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from operator import itemgetter

from alerts.model import Finding
from service.detection.inputs import COVERAGE, EPOCH_KINDS
from store.alert_records import (
    EVENT_LIKE_KINDS,
    FIRING,
    RESOLVED,
    Alert,
    AlertWrite,
    Fingerprint,
    Numbers,
    changed,
    is_event_like,
)
from store.json_text import sorted_compact_text

SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
# Evidence that may differ between two reports of the same occurrence (the latest range observation,
# the undoing commit of a re-classified rewind).
# An unclean election seen in metadata before its log end is observed is reported again (critical) when
# the log end goes back: the same occurrence.
VOLATILE_EVIDENCE = frozenset(
    {
        "undone_by_offset",
        "undone_at",
        "log_start",
        "log_end",
        "range_observed_at",
        "group_state",
        "new_isr",
        "new_log_end",
        "log_end_went_back",
    }
)


# judged on a partition's log range: not judged where this evaluation has none (plan's ``unranged``)
RANGED_KINDS = COVERAGE["offsets"] | EPOCH_KINDS


@dataclass(frozen=True, slots=True)
class LifecycleRules:
    quiet_period_seconds: float = 3600.0
    resolve_after_clean: int = 3
    refresh_seconds: float = 30.0
    refresh_limit: int = 250  # silent refreshes an evaluation at most (the module doc)


@dataclass(frozen=True)
class Plan:
    writes: tuple[AlertWrite, ...]
    clean_streaks: Mapping[Fingerprint, int]  # state-like firing alerts: clean evaluations in a row


def new_alert_id(now: float) -> str:
    """Sortable by creation time, unique without coordination: 64 random bits, as a fleet's burst names
    tens of thousands in one millisecond (32 bits collided in one burst of 37,000 in six)."""
    return f"al-{int(now * 1000):013d}-{secrets.token_hex(8)}"


def occurrence_identity(f: Finding) -> str:
    stable = {k: v for k, v in f.evidence.items() if k not in VOLATILE_EVIDENCE}
    return sorted_compact_text(stable)


def plan(
    firing: Mapping[Fingerprint, Alert],
    findings: Iterable[Finding],
    covered: frozenset[str],
    clean_streaks: Mapping[Fingerprint, int],
    now: float,
    rules: LifecycleRules,
    new_id: str | None = None,
    resolved: frozenset[tuple[Fingerprint, str]] = frozenset(),
    unranged: frozenset[tuple[str, int]] = frozenset(),
) -> Plan:
    """The writes this cycle needs. ``covered``: kinds whose input this evaluation had (a state-like alert
    of another kind is neither refreshed nor counted clean). ``resolved``: (fingerprint, occurrence) of
    event-like alerts resolved lately; the same occurrence reported again (re-read after a crash) does
    not fire a new alert. ``unranged``: (topic, partition) whose log range this evaluation's offsets
    observation lacks (no leader, a broker that did not answer): an alert there of a kind judged on log
    ranges (:data:`RANGED_KINDS`) is not counted clean either. Counted, a standing alert of a partition
    offline through a broker's restart resolved, and fired again, a second page, once its range was back."""
    working = dict(firing)
    streaks = {fp: n for fp, n in clean_streaks.items() if fp in working}
    writes: list[AlertWrite] = []
    reported: set[Fingerprint] = set()
    # A fleet's thousands of firing lag alerts are reported again every evaluation (28,000 at 50k
    # partitions after a backlog): the loop below is written for them, each step inline (the fingerprint,
    # the kind's class, the state comparison), and the refreshed alert built only when it is written.
    refresh = rules.refresh_seconds
    due: list[_Due] = []  # the silent refreshes due
    skipped: set[Fingerprint] = set()  # reported, not in ``working`` (an occurrence resolved lately)
    get, report = working.get, reported.add
    for n, f in enumerate(findings):
        kind = f.kind
        fp = (kind, f.cluster, f.group, f.topic, f.partition)  # f.fingerprint
        report(fp)
        old = get(fp)
        if old is None:
            if kind in EVENT_LIKE_KINDS and (fp, occurrence_identity(f)) in resolved:
                skipped.add(fp)
                continue
            alert = _new(f, now, f"{new_id}-{n}" if new_id else new_alert_id(now))
            writes.append(AlertWrite(alert, True, "fired"))
        elif kind in EVENT_LIKE_KINDS:
            alert, transition = _event_repeat(old, f, now)
            writes.append(AlertWrite(alert, False, transition))
        else:
            if streaks:
                streaks.pop(fp, None)  # reported: its clean streak starts again (none is a streak of 0)
            if f.cause != old.cause or f.severity != old.severity:
                alert, transition = _state_repeat(old, f, now)
                writes.append(AlertWrite(alert, False, transition))
            else:
                if now - old.updated_at >= refresh:
                    due.append((old.updated_at, n, fp, f, old))
                continue  # the alert stands as it is in ``working`` (unless refreshed below)
        working[fp] = alert
    if due:
        writes.extend(_refreshes(due, working, now, rules.refresh_limit))
    # The alerts not reported again, in ``working``'s order (the writes'), found in C; of those, a state-like
    # alert of a kind this evaluation did not cover stands as it is (thousands of firing lag alerts
    # between two sweeps), told by its fingerprint's kind.
    # Every one reported (the fleet's common case) is told by counting, without hashing every fingerprint
    # again: the reported ones in ``working`` are all reported but those skipped and not in it.
    every = len(reported) - (len(skipped.difference(working)) if skipped else 0) == len(working)
    unreported = set() if every else working.keys() - reported
    judged = covered | EVENT_LIKE_KINDS
    for fp in filter(unreported.__contains__, working) if unreported else ():
        if fp[0] not in judged:
            continue
        alert = working[fp]
        if is_event_like(alert.kind):
            if now - alert.updated_at >= rules.quiet_period_seconds:
                writes.append(_resolve(alert, now, "quiet_period"))
        elif not (unranged and alert.kind in RANGED_KINDS and (alert.topic, alert.partition) in unranged):
            streaks[fp] = streaks.get(fp, 0) + 1
            if streaks[fp] >= rules.resolve_after_clean:
                writes.append(_resolve(alert, now, "cleared"))
                del streaks[fp]
    return Plan(tuple(writes), streaks)


_Due = tuple[float, int, Fingerprint, Finding, Alert]  # a silent refresh due: (updated_at, n, fp, f, old)


def _refreshes(
    due: list[_Due], working: dict[Fingerprint, Alert], now: float, limit: int
) -> list[AlertWrite]:
    """The silent refreshes of this evaluation: of those ``due``, the ``limit`` refreshed longest ago (in
    the findings' order), each also put in ``working``."""
    if len(due) > limit:
        due = sorted(heapq.nsmallest(limit, due, key=itemgetter(0, 1)), key=itemgetter(1))
    out = []
    for _, _, fp, f, old in due:
        alert, transition = _state_repeat(old, f, now)
        working[fp] = alert
        out.append(AlertWrite(alert, False, transition))
    return out


def _new(f: Finding, now: float, alert_id: str) -> Alert:
    return Alert(
        id=alert_id,
        kind=f.kind,
        severity=f.severity,
        status=FIRING,
        cluster=f.cluster,
        group=f.group,
        topic=f.topic,
        partition=f.partition,
        started_at=now,
        updated_at=now,
        summary=f.summary,
        cause=f.cause,
        magnitude=dict(f.magnitude),
        magnitude_total=dict(f.magnitude),
        evidence=dict(f.evidence),
        occurrence=occurrence_identity(f),
        occurrences=1,
    )


def _event_repeat(old: Alert, f: Finding, now: float) -> tuple[Alert, str | None]:
    identity = occurrence_identity(f)
    base = replace(
        old,
        updated_at=now,
        summary=f.summary,
        evidence=dict(f.evidence),
        cause=f.cause,
        magnitude=dict(f.magnitude),
    )
    if identity == old.occurrence:
        total = _add(_add(old.magnitude_total, old.magnitude, -1), f.magnitude, 1)
        changed = (f.cause, f.severity) != (old.cause, old.severity)
        alert = replace(base, severity=f.severity, magnitude_total=total)
        return alert, "reclassified" if changed else None
    alert = replace(
        base,
        severity=max(old.severity, f.severity, key=lambda s: SEVERITY_RANK.get(s, 0)),
        magnitude_total=_add(old.magnitude_total, f.magnitude, 1),
        occurrence=identity,
        occurrences=old.occurrences + 1,
    )
    return alert, "repeated"


def _state_repeat(old: Alert, f: Finding, now: float) -> tuple[Alert, str | None]:
    """The latest severity, cause and magnitude. A state-like alert's occurrence is never compared (one
    condition, not distinct events): it is the one it fired or last changed with, not re-encoded at
    every refresh of a fleet's thousands of firing alerts."""
    moved = _state_changed(old, f)
    alert = changed(
        old,
        severity=f.severity,
        cause=f.cause,
        updated_at=now,
        summary=f.summary,
        magnitude=dict(f.magnitude),
        magnitude_total=dict(f.magnitude),
        evidence=dict(f.evidence),
        occurrence=occurrence_identity(f) if moved else old.occurrence,
    )
    return alert, "changed" if moved else None


def _state_changed(old: Alert, f: Finding) -> bool:
    return (f.cause, f.severity) != (old.cause, old.severity)


def _resolve(alert: Alert, now: float, reason: str) -> AlertWrite:
    done = changed(alert, status=RESOLVED, resolved_at=now, resolved_reason=reason)
    return AlertWrite(done, False, "resolved", {"reason": reason})


def _add(total: Numbers, part: Numbers, sign: int) -> dict[str, int | float | None]:
    """``total`` plus (or minus) ``part`` per field; an unknown (None) part leaves the total as it is.

    A bound (``X_max``) adds up over the occurrences with the certain figure ``X`` of those that had no
    bound (that figure was exact): an exact skip of 200 and one of at most 6 are at most 206 together,
    never at most 6 (a bound below the certain total). An unknown bound leaves the total's unknown."""
    out: dict[str, int | float | None] = dict(total)
    for key, value in part.items():
        if value is None:
            out.setdefault(key, None)
            continue
        base = out.get(key)
        out[key] = sign * value if base is None else base + sign * value
    for key in {k for k in (*total, *part) if k.endswith(BOUND)}:
        have, more = _bound(total, key), _bound(part, key)
        out[key] = None if have is None or more is None else have + sign * more
    return out


BOUND = "_max"


def _bound(numbers: Numbers, key: str) -> int | float | None:
    """The bound ``key`` of these figures: the certain figure where they had none (0 without either)."""
    if key in numbers:
        return numbers[key]
    return numbers.get(key.removesuffix(BOUND), 0)
