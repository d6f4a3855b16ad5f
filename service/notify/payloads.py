"""What receivers get (pure): the webhook document and the Alertmanager alert of one alert event.

Both are built when the notification is queued (the row keeps them), from the alert as stored with the
severity and cause of the transition being notified. Times are RFC 3339 in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from store.alert_records import Alert
from store.notification_records import RESOLVED_EVENT

WEBHOOK_VERSION = "1"


def rfc3339(at: float | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def runbook_url(base: str | None, kind: str) -> str | None:
    """``<base>/<kind>.md``: the same link the HTTP API gives the alert."""
    return None if base is None else f"{base.rstrip('/')}/{kind}.md"


def alert_url(external_url: str | None, alert_id: str) -> str | None:
    return None if external_url is None else f"{external_url.rstrip('/')}/api/v1/alerts/{alert_id}"


def webhook_payload(
    alert: Alert,
    event: str,
    *,
    transition: str | None,
    runbook_base: str | None,
    external_url: str | None = None,
) -> dict[str, Any]:
    """The JSON document POSTed to a webhook (the dispatcher adds ``notification_id`` when sending)."""
    resolved = event == RESOLVED_EVENT
    return {
        "version": WEBHOOK_VERSION,
        "event": event,
        "transition": transition,
        "alert": {
            "id": alert.id,
            "kind": alert.kind,
            "severity": alert.severity,
            "status": "resolved" if resolved else "firing",
            "cluster": alert.cluster,
            "group": alert.group,
            "topic": alert.topic,
            "partition": alert.partition,
            "summary": alert.summary,
            "cause": alert.cause,
            "magnitude": dict(alert.magnitude),
            "magnitude_total": dict(alert.magnitude_total),
            "evidence": dict(alert.evidence),
            "occurrences": alert.occurrences,
            "started_at": rfc3339(alert.started_at),
            "updated_at": rfc3339(alert.updated_at),
            "resolved_at": rfc3339(alert.resolved_at) if resolved else None,
            "resolved_reason": alert.resolved_reason if resolved else None,
            "runbook_url": runbook_url(runbook_base, alert.kind),
            "snapshot_id": alert.snapshot_id,
            "drill": alert.drill,
            "url": alert_url(external_url, alert.id),
        },
    }


def am_labels(alert: Alert) -> dict[str, str]:
    """Alertmanager labels; absent ones are left out (an empty label value means no label)."""
    labels = {
        "alertname": alert.kind,
        "severity": alert.severity,
        "cluster": alert.cluster,
        "group": alert.group,
        "topic": alert.topic,
        "partition": None if alert.partition is None else str(alert.partition),
        "drill": "true" if alert.drill else None,  # route or inhibit drills in Alertmanager
    }
    return {k: v for k, v in labels.items() if v}


def description(alert: Alert) -> str:
    parts = [f"[drill] {alert.summary}" if alert.drill else alert.summary]
    if alert.cause:
        parts.append(f"cause: {alert.cause}")
    numbers = ", ".join(f"{k}={v}" for k, v in sorted(alert.magnitude.items()) if v is not None)
    if numbers:
        parts.append(f"magnitude: {numbers}")
    if alert.occurrences > 1:
        parts.append(f"occurrences: {alert.occurrences}")
    return "; ".join(parts)


def alertmanager_alert(
    alert: Alert, event: str, *, runbook_base: str | None, external_url: str | None = None
) -> dict[str, Any]:
    """One element of the ``POST /api/v2/alerts`` list. A firing alert's ``endsAt`` is added when it is
    sent (it must move with every re-post); a resolved one ends at ``resolved_at``."""
    annotations = {
        "summary": alert.summary,
        "description": description(alert),
        "runbook_url": runbook_url(runbook_base, alert.kind),
        "alert_id": alert.id,
        "snapshot_id": alert.snapshot_id,
    }
    body: dict[str, Any] = {
        "labels": am_labels(alert),
        "annotations": {k: v for k, v in annotations.items() if v},
        "startsAt": rfc3339(alert.started_at),
    }
    if event == RESOLVED_EVENT:
        body["endsAt"] = rfc3339(alert.resolved_at if alert.resolved_at is not None else alert.updated_at)
    generator = alert_url(external_url, alert.id)
    if generator is not None:
        body["generatorURL"] = generator
    return body
