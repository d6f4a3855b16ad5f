"""offsetguard's dispatcher posts a FIRING then a RESOLVED alert to a real Alertmanager."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from service.notify.dispatcher import Dispatcher
from service.settings import NotifySettings
from store.alerts import AlertStore
from store.notifications import NotificationStore
from tests.service.notify.builders import alert, alertmanager, change, fire, resolved
from tests.service.notify.integration.alertmanager import (
    Alertmanager,
    ensure_alertmanager,
    running_alertmanager,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def am(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Alertmanager]:
    with running_alertmanager(ensure_alertmanager(), tmp_path_factory.mktemp("alertmanager")) as running:
        yield running


async def _until(what: str, probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = await asyncio.to_thread(probe)
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not seen in {timeout} s"
        await asyncio.sleep(0.2)


async def test_alertmanager_receives_firing_then_resolved(
    am: Alertmanager, alert_store: AlertStore, queue: NotificationStore
) -> None:
    settings = NotifySettings(
        receivers=[alertmanager(url=am.base, resend_seconds=60)],
        poll_seconds=0.2,
        runbook_base_url="https://runbooks.example",
        external_url="http://offsetguard.example:8080",
    )
    dispatcher = Dispatcher(settings, queue)
    now = time.time()
    firing = replace(alert("al-am-1", at=now), group="billing-am")

    def ours() -> list[dict[str, Any]]:
        return [a for a in am.alerts() if a["annotations"].get("alert_id") == "al-am-1"]

    await dispatcher.start()
    try:
        fire(alert_store, firing)
        await dispatcher.on_alerts([firing])
        (active,) = await _until("firing alert in Alertmanager", ours)

        change(alert_store, resolved(firing, time.time()), "resolved", time.time())
        await dispatcher.on_alerts([])
        await _until("alert resolved in Alertmanager", lambda: not ours())
    finally:
        await dispatcher.stop()

    assert active["status"]["state"] == "active"
    assert active["labels"] == {
        "alertname": "offset_rewind",
        "severity": "critical",
        "cluster": "prod",
        "group": "billing-am",
        "topic": "orders",
        "partition": "3",
    }
    assert active["annotations"]["runbook_url"] == "https://runbooks.example/offset_rewind.md"
    assert active["generatorURL"] == "http://offsetguard.example:8080/api/v1/alerts/al-am-1"
    assert [(n.event, n.state) for n in queue.notifications()] == [
        ("firing", "delivered"),
        ("resolved", "delivered"),
    ]
