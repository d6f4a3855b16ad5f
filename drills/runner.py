"""Run drills: set up the drill's own topic and group, cause the incident, wait for the alert (and its
notifications) through the service's API, then acknowledge it, clean up and judge.

Each drill kind is one function that acts on Kafka and returns what it caused (:class:`Caused`); the
runner does the rest the same way for all. Latencies are measured from the end of the action to the
moment the API shows the alert (polled every :data:`POLL_S`), and to every queued notification delivered.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from collectors.errors import OffsetguardError
from drills.kafka_io import DrillKafka
from drills.model import Caused, DrillResult
from store.alert_records import DRILL_PREFIX

log = logging.getLogger(__name__)
POLL_S = 0.25


class Watch(Protocol):
    cluster: str

    def alerts(self, group: str) -> list[dict[str, Any]]: ...
    def alert(self, alert_id: str) -> dict[str, Any]: ...
    def committed(self, group: str, topic: str, partition: int) -> int | None: ...
    def partition(self, topic: str, partition: int) -> dict[str, Any] | None: ...
    def group(self, group: str) -> dict[str, Any] | None: ...
    def ack(self, alert_id: str, comment: str) -> None: ...


@dataclass(frozen=True)
class Options:
    timeout_s: float = 120.0  # action done -> alert; the setup gets as long again
    notify_timeout_s: float = 60.0
    lag_messages: int = 10_500  # above the default lag limit (10,000)
    notify_grace_s: float = 5.0  # how long after the alert a first notification may take to be queued
    quiet_s: float = 15.0  # a drill that expects no alert: how long none must come (a few polls)


@dataclass(frozen=True)
class Names:
    topic: str
    group: str


@dataclass(frozen=True)
class Spec:
    """A drill kind: the alert it must raise (None: it must raise none on its group), the severities
    accepted, and the brokers it stops (0: safe on a live cluster, it touches only its own topic and
    group; else it runs only on a sandbox with that many brokers)."""

    name: str
    alert_kind: str | None
    severities: frozenset[str]
    summary: str
    act: Callable[[DrillKafka, Watch, Names, Options], Caused]
    cause: str | None = None
    brokers_needed: int = 0

    @property
    def live_safe(self) -> bool:
        return self.brokers_needed == 0

    @property
    def expected(self) -> str:
        if self.alert_kind is None:
            return "none"
        return f"{self.alert_kind}/{'|'.join(sorted(self.severities))}"


class Setup:
    """Waits for the service to see a drill's setup before the incident is caused."""

    def __init__(self, watch: Watch, names: Names, timeout: float) -> None:
        self._watch, self._names, self._timeout = watch, names, timeout

    def committed(self, offset: int) -> None:
        n = self._names
        until(
            lambda: self._watch.committed(n.group, n.topic, 0) == offset,
            self._timeout,
            f"the service sees {n.group} at {offset}",
        )

    def topic(self) -> None:
        """The service has the drill's partition in its metadata and a log range for it: judged before
        then, a loss on a topic it has not seen yet reads as the topic's deletion."""
        n = self._names
        until(
            lambda: (self._watch.partition(n.topic, 0) or {}).get("log_start") is not None,
            self._timeout,
            f"the service sees {n.topic}",
        )

    def partition(self, **want: Any) -> None:
        """The service sees the drill's partition with every field of ``want`` (``leader``, ``isr``,
        ``log_end``, ...) as given (a list in any order)."""
        n = self._names

        def same(found: Any, value: Any) -> bool:
            if isinstance(value, list):
                return isinstance(found, list) and sorted(found) == sorted(value)
            return bool(found == value)

        def seen() -> bool:
            p = self._watch.partition(n.topic, 0) or {}
            return all(same(p.get(k), v) for k, v in want.items())

        until(seen, self._timeout, f"the service sees {n.topic}[0] with {want}")

    def coordinator(self, other_than: int | None = None) -> int:
        """The group's coordinator as the service sees it (one other than ``other_than``)."""
        n = self._names

        def seen() -> int | None:
            found = (self._watch.group(n.group) or {}).get("coordinator")
            return None if found is None or found == other_than else int(found)

        return int(until(seen, self._timeout, f"the service sees a coordinator of {n.group}"))

    def alerted(self, kind: str) -> None:
        """The service has alerted ``kind`` on the drill's group: detection has applied what the setup
        did (its evaluations follow the collectors, which the API shows first)."""
        n = self._names
        until(
            lambda: any(a["kind"] == kind for a in self._watch.alerts(n.group)),
            self._timeout,
            f"the service alerts {kind} on {n.group}",
        )


class DrillFailed(OffsetguardError):
    """A drill could not be run to the end (its setup, or the service, did not get there)."""


def until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise DrillFailed(f"{what}: not within {timeout:.0f} s")
        time.sleep(POLL_S)


def names_for(kind: str, run_id: str | None = None) -> Names:
    name = f"{DRILL_PREFIX}{kind}-{run_id or uuid.uuid4().hex[:8]}"
    return Names(topic=name, group=name)


def run_drill(
    spec: Spec, kafka: DrillKafka, watch: Watch, options: Options, names: Names | None = None
) -> DrillResult:
    """Run one drill to the end (cleanup included, whatever happened) and judge it."""
    names = names or names_for(spec.name)
    base: dict[str, Any] = {
        "drill": spec.name,
        "expected": spec.expected,
        "topic": names.topic,
        "group": names.group,
    }
    result: DrillResult
    try:
        caused = spec.act(kafka, watch, names, options)
        if spec.alert_kind is None:
            result = _judge_quiet(spec, watch, names, caused, options, base)
        else:
            result = _judge_alerted(spec, watch, names, caused, options, base)
    except (OffsetguardError, OSError) as exc:
        log.warning("drill %s failed: %s", spec.name, exc)
        result = DrillResult(**base, passed=False, detail=str(exc))
    finally:
        problems = kafka.remove(names.group, names.topic)
    if problems:
        return replace(result, cleanup="; ".join(problems))
    return result


def _judge_alerted(
    spec: Spec, watch: Watch, names: Names, caused: Caused, options: Options, base: Mapping[str, Any]
) -> DrillResult:
    alert, latency = _wait_alert(spec, watch, names, caused, options)
    if alert is None:
        return DrillResult(
            **base, passed=False, detail=f"no {spec.alert_kind} alert within {options.timeout_s:.0f} s"
        )
    result = _judge(spec, watch, alert, caused, latency, options, base)
    return replace(result, acknowledged=_ack(watch, alert["id"], spec, result))


def _ack(watch: Watch, alert_id: str, spec: Spec, result: DrillResult) -> str:
    """Acknowledge the drill's alert (an event-like one resolves); without a write token it stays firing
    until its quiet period ends, which does not change the verdict."""
    try:
        watch.ack(alert_id, f"offsetguard drill {spec.name}: {'PASS' if result.passed else 'FAIL'}")
    except OffsetguardError as exc:
        log.warning("drill %s: alert %s not acknowledged: %s", spec.name, alert_id, exc)
        return f"no: {exc}"
    return "yes"


def _wait_alert(
    spec: Spec, watch: Watch, names: Names, caused: Caused, options: Options
) -> tuple[dict[str, Any] | None, float | None]:
    deadline = caused.at + options.timeout_s
    while True:
        for a in watch.alerts(names.group):
            if a["kind"] == spec.alert_kind and (spec.cause is None or a["cause"] == spec.cause):
                return a, time.monotonic() - caused.at
        if time.monotonic() > deadline:
            return None, None
        time.sleep(POLL_S)


def _judge(
    spec: Spec,
    watch: Watch,
    alert: Mapping[str, Any],
    caused: Caused,
    latency: float | None,
    options: Options,
    base: Mapping[str, Any],
) -> DrillResult:
    seen = {
        "alert_id": alert["id"],
        "seen_kind": alert["kind"],
        "seen_severity": alert["severity"],
        "seen_cause": alert["cause"],
        "magnitude": dict(alert["magnitude"]),
        "detection_latency_s": None if latency is None else round(latency, 2),
    }
    wrong = []
    if alert["severity"] not in spec.severities:
        wrong.append(f"severity {alert['severity']}, expected {'|'.join(sorted(spec.severities))}")
    for name, value in caused.magnitude.items():
        if alert["magnitude"].get(name) != value:
            wrong.append(f"{name} {alert['magnitude'].get(name)}, expected {value}")
    if not alert.get("drill", False):
        wrong.append("not marked as a drill")
    notification, notified_in = _wait_notified(watch, alert["id"], caused, options)
    if notification not in ("delivered", "none queued"):
        wrong.append(f"notification {notification}")
    return DrillResult(
        **base,
        **seen,
        passed=not wrong,
        detail="; ".join(wrong) or "as expected",
        notification=notification,
        notification_latency_s=None if notified_in is None else round(notified_in, 2),
    )


def _wait_notified(watch: Watch, alert_id: str, caused: Caused, options: Options) -> tuple[str, float | None]:
    """``delivered`` once every receiver a firing notification was queued for has it; ``none queued`` if
    none was queued within ``notify_grace_s`` (no receivers, or none routes this alert); else the
    states left when ``notify_timeout_s`` ran out."""
    grace = time.monotonic() + options.notify_grace_s
    deadline = time.monotonic() + options.notify_timeout_s
    while True:
        firing = [n for n in watch.alert(alert_id).get("notifications", []) if n["event"] != "resolved"]
        if firing and all(n["state"] == "delivered" for n in firing):
            return "delivered", time.monotonic() - caused.at
        now = time.monotonic()
        if not firing and now > grace:
            return "none queued", None
        if now > deadline:
            states = ", ".join(
                f"{n['receiver']}: {n['state']} ({n['last_error'] or 'no error'})" for n in firing
            )
            return f"not delivered in {options.notify_timeout_s:.0f} s: {states}", None
        time.sleep(POLL_S)


def _judge_quiet(
    spec: Spec, watch: Watch, names: Names, caused: Caused, options: Options, base: Mapping[str, Any]
) -> DrillResult:
    """A drill that must raise nothing: no alert on its group for ``quiet_s`` after the action (any that
    comes is acknowledged as the drill's failure)."""
    deadline = time.monotonic() + options.quiet_s
    while not (raised := watch.alerts(names.group)) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    if not raised:
        return DrillResult(
            **base,
            passed=True,
            detail=f"no alert in {options.quiet_s:g} s",
            magnitude=dict(caused.magnitude),
            detection_latency_s=None if caused.seen_in is None else round(caused.seen_in, 2),
        )
    first = raised[-1]  # newest first: the earliest
    result = DrillResult(
        **base,
        passed=False,
        detail="raised " + ", ".join(f"{a['kind']}/{a['severity']}: {a['summary']}" for a in raised[::-1]),
        alert_id=first["id"],
        seen_kind=first["kind"],
        seen_severity=first["severity"],
        seen_cause=first["cause"],
        magnitude=dict(first["magnitude"]),
        detection_latency_s=round(time.monotonic() - caused.at, 2),
    )
    acks = [_ack(watch, a["id"], spec, result) for a in raised]
    return replace(result, acknowledged="yes" if all(a == "yes" for a in acks) else "; ".join(acks))
