from pathlib import Path

from service.runtime import build_runtime
from service.settings import load_settings
from store.alerts import AlertStore
from store.notifications import NotificationStore
from tests.service.notify.builders import alert, fire, webhook


async def test_build_runtime_notify_enabled_fired_alert_queued(tmp_path: Path) -> None:
    settings = load_settings(
        store={"path": str(tmp_path / "og.db")},
        notify={"receivers": [webhook(url="http://127.0.0.1:9/hook").model_dump() | {"headers": {}}]},
    )
    runtime = build_runtime(settings)
    assert runtime.notifier is not None and runtime.notifications is not None
    await runtime.start()
    with AlertStore.open(settings.store) as alerts:
        fire(alerts, alert())
    await runtime.stop()

    with NotificationStore.open(settings.store) as reopened:  # at the latest, stop() queues it
        rows = reopened.notifications()

    assert [(n.receiver, n.event) for n in rows] == [("hook", "firing")]


def test_build_runtime_notify_disabled_no_queue(tmp_path: Path) -> None:
    settings = load_settings(store={"path": str(tmp_path / "og.db")}, notify={"enabled": False})
    runtime = build_runtime(settings)
    try:
        assert (runtime.notifier, runtime.notifications) == (None, None)
    finally:
        if runtime.alerts is not None:
            runtime.alerts.close()
        if runtime.store is not None:
            runtime.store.close()
