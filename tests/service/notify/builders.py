"""Literal alerts, receivers and silences for the notification tests, and helpers that store alert
transitions through the real :class:`AlertStore` (the outbox the dispatcher reads)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import SecretStr

from service.settings import AlertmanagerReceiverSettings, WebhookReceiverSettings
from store.alert_records import FIRING, RESOLVED, Alert, AlertWrite
from store.alerts import AlertStore
from store.notification_records import Matcher, Silence

T0 = 1_700_000_000.0


def alert(
    alert_id: str = "al-1",
    *,
    kind: str = "offset_rewind",
    severity: str = "critical",
    group: str | None = "billing",
    topic: str | None = "orders",
    partition: int | None = 3,
    cluster: str = "prod",
    at: float = T0,
    **kw: Any,
) -> Alert:
    return Alert(
        id=alert_id,
        kind=kind,
        severity=severity,
        status=FIRING,
        cluster=cluster,
        group=group,
        topic=topic,
        partition=partition,
        started_at=at,
        updated_at=at,
        summary=kw.pop("summary", f"{group} rewound on {topic}-{partition}"),
        cause=kw.pop("cause", "manual_reset"),
        magnitude=kw.pop("magnitude", {"messages_replayed": 200}),
        magnitude_total=kw.pop("magnitude_total", {"messages_replayed": 200}),
        evidence=kw.pop("evidence", {"old_offset": 500, "new_offset": 300}),
        occurrence=kw.pop("occurrence", "o1"),
        occurrences=kw.pop("occurrences", 1),
        **kw,
    )


def resolved(a: Alert, at: float, reason: str = "cleared") -> Alert:
    return replace(a, status=RESOLVED, resolved_at=at, resolved_reason=reason, updated_at=at)


def fire(store: AlertStore, a: Alert) -> Alert:
    """Store ``a`` as a new firing alert (transition ``fired``)."""
    (stored,) = store.update_firing(a.cluster, lambda cur, done: [AlertWrite(a, True, "fired")], a.started_at)
    return stored


def change(store: AlertStore, a: Alert, transition: str, at: float) -> Alert:
    """Overwrite the stored alert with ``a`` and record ``transition`` (``repeated``, ``resolved``...)."""
    (stored,) = store.update_firing(a.cluster, lambda cur, done: [AlertWrite(a, False, transition)], at)
    return stored


def webhook(
    name: str = "hook", url: str = "http://hooks.test/offsetguard", **kw: Any
) -> WebhookReceiverSettings:
    headers = {k: SecretStr(v) for k, v in kw.pop("headers", {}).items()}
    return WebhookReceiverSettings(name=name, url=url, headers=headers, **kw)


def alertmanager(
    name: str = "am", url: str = "http://am.test:9093", **kw: Any
) -> AlertmanagerReceiverSettings:
    return AlertmanagerReceiverSettings(name=name, url=url, **kw)


def silence(
    *matchers: tuple[str, str, str],
    starts: float = T0 - 10,
    ends: float = T0 + 3600,
    silence_id: str = "si-1",
) -> Silence:
    return Silence(
        silence_id,
        tuple(Matcher(n, op, v) for n, op, v in matchers),
        starts,
        ends,
        "maintenance",
        "alice",
        starts,
        starts,
    )
