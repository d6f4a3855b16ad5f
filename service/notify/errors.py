"""Errors of notification delivery, translated from httpx at the sender seam.

OffsetguardError            (collectors.errors)
└── DeliveryError           a receiver did not take a notification: .receiver, .url, .status,
                            .retryable, .retry_after
"""

from __future__ import annotations

from collectors.errors import OffsetguardError


class DeliveryError(OffsetguardError):
    """A receiver did not accept a notification. ``status`` is None when no response came back;
    ``retryable`` is False for a refusal that will not change (most 4xx); ``retry_after`` is the
    receiver's own ``Retry-After`` in seconds, when it gave one."""

    def __init__(
        self,
        message: str,
        *,
        receiver: str,
        url: str,
        status: int | None = None,
        retryable: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.receiver = receiver
        self.url = url
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
