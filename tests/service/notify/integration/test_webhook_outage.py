"""A webhook that is down (port closed, then 503) for a while still gets every notification once it is
back, including the ones queued before a restart of the runtime and those of alerts fired while it was
stopped."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from service.notify.dispatcher import Dispatcher
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.notifications import NotificationStore
from store.settings import StoreSettings
from tests.service.metrics.serving import free_port
from tests.service.notify.builders import alert, change, fire, resolved, webhook
from tests.service.notify.integration.webhook import WebhookReceiver

pytestmark = pytest.mark.integration


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    r = WebhookReceiver(free_port())
    try:
        yield r
    finally:
        r.down()


def _runtime(settings: Settings) -> Runtime:
    alerts = AlertStore.open(settings.store)
    notifications = NotificationStore.open(settings.store)
    notifier = Dispatcher(settings.notify, notifications)
    return Runtime(
        settings,
        store=None,
        latest=LatestObservations(),
        jobs=[],
        alerts=alerts,
        notifications=notifications,
        notifier=notifier,
    )


async def _until(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not in {timeout} s"
        await asyncio.sleep(0.05)


async def test_webhook_down_then_back_across_restart_gets_every_notification(
    receiver: WebhookReceiver, store_settings: StoreSettings
) -> None:
    settings = load_settings(
        store=store_settings.model_dump(),
        notify={
            "receivers": [webhook(url=receiver.url).model_dump() | {"headers": {}}],
            "retry": {"initial_seconds": 0.1, "max_seconds": 0.5},
            "poll_seconds": 0.2,
        },
    )
    now = time.time()
    first = _runtime(settings)
    assert first.alerts is not None and first.notifications is not None
    queue = first.notifications
    await first.start()
    # Down: the port is closed.
    a1 = fire(first.alerts, replace(alert("al-1", at=now), partition=1))
    fire(first.alerts, replace(alert("al-2", at=now), partition=2))
    change(first.alerts, resolved(a1, now + 1), "resolved", now + 1)
    await _until("a failed attempt", lambda: any(n.attempts > 0 for n in queue.notifications()))
    # Up but failing.
    receiver.failing = True
    receiver.up()
    await _until("a 503", lambda: receiver.refused > 0)
    await first.stop()
    assert receiver.accepted == []

    with AlertStore.open(settings.store) as alerts:  # an alert fires while no dispatcher runs
        fire(alerts, replace(alert("al-3", at=now + 2), partition=3))
    receiver.failing = False
    second = _runtime(settings)
    assert second.notifications is not None
    await second.start()
    try:
        await _until("every notification", lambda: len(receiver.events()) >= 4)
        await asyncio.sleep(0.5)  # nothing more arrives
        rows = await asyncio.to_thread(second.notifications.notifications)
    finally:
        await second.stop()

    events = receiver.events()
    assert sorted(events) == [
        ("al-1", "firing"),
        ("al-1", "resolved"),
        ("al-2", "firing"),
        ("al-3", "firing"),
    ]
    assert events.index(("al-1", "firing")) < events.index(("al-1", "resolved"))
    assert {n.state for n in rows} == {"delivered"}
    # The head row probed the outage (refused, then 503) and the third attempt went through.
    probe = next(n for n in rows if (n.alert_id, n.event) == ("al-1", "firing"))
    assert probe.attempts >= 3
