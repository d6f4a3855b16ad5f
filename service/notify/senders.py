"""The HTTP seam: POST a document to a receiver with an :class:`httpx.AsyncClient` and translate every
failure into :class:`~service.notify.errors.DeliveryError`. Tests hand the client an
:class:`httpx.MockTransport` instead of patching anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from service.notify.errors import DeliveryError
from service.settings import AlertmanagerReceiverSettings, HttpReceiverSettings, WebhookReceiverSettings
from store.notification_records import Notification

if TYPE_CHECKING:  # imported when a receiver is sent to: httpx (and its CLI's rich, pygments, click) is
    import httpx  # ~6-12 MB resident a service without receivers need not hold

USER_AGENT = "offsetguard-notify/1"
# Worth retrying: the receiver may take it later. Any other non-2xx is a refusal of this document.
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


def alertmanager_url(receiver: AlertmanagerReceiverSettings) -> str:
    return f"{receiver.url.rstrip('/')}/api/v2/alerts"


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date is rare from receivers; our own backoff applies
    return seconds if seconds >= 0 else None


async def post_json(
    client: httpx.AsyncClient,
    receiver: HttpReceiverSettings,
    url: str,
    body: Any,
    extra_headers: dict[str, str] | None = None,
) -> None:
    """POST ``body`` as JSON; return on 2xx, else raise :class:`DeliveryError`."""
    import httpx

    headers = {"User-Agent": USER_AGENT, **(extra_headers or {})}
    headers.update({k: v.get_secret_value() for k, v in receiver.headers.items()})
    try:
        response = await client.post(url, json=body, headers=headers, timeout=receiver.timeout_seconds)
    except httpx.TimeoutException as exc:
        raise DeliveryError(
            f"{receiver.name}: no answer within {receiver.timeout_seconds} s", receiver=receiver.name, url=url
        ) from exc
    except httpx.HTTPError as exc:  # connection refused, reset, DNS, protocol errors
        raise DeliveryError(
            f"{receiver.name}: {type(exc).__name__}: {exc}", receiver=receiver.name, url=url
        ) from exc
    if response.is_success:
        return
    status = response.status_code
    raise DeliveryError(
        f"{receiver.name}: HTTP {status}: {response.text[:200]}",
        receiver=receiver.name,
        url=url,
        status=status,
        retryable=status in RETRYABLE_STATUS,
        retry_after=_retry_after(response),
    )


async def send_webhook(
    client: httpx.AsyncClient, receiver: WebhookReceiverSettings, notification: Notification
) -> None:
    """One notification, one POST. ``notification_id`` lets the receiver drop a redelivery (at least once)."""
    body = {**notification.payload, "notification_id": notification.id}
    headers = {
        "X-Offsetguard-Notification-Id": str(notification.id),
        "X-Offsetguard-Event": notification.event,
    }
    await post_json(client, receiver, receiver.url, body, headers)


async def send_alertmanager(
    client: httpx.AsyncClient, receiver: AlertmanagerReceiverSettings, alerts: Sequence[dict[str, Any]]
) -> None:
    """One ``POST /api/v2/alerts`` with a list of alerts."""
    await post_json(client, receiver, alertmanager_url(receiver), list(alerts))
