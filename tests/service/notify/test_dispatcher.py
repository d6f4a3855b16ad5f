import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from service.notify.dispatcher import Dispatcher
from service.notify.errors import DeliveryError
from service.notify.senders import send_webhook
from service.settings import NotifySettings, RetrySettings
from store.alerts import AlertStore
from store.notification_records import Notification
from store.notifications import NotificationStore
from tests.service.notify.builders import T0, alert, alertmanager, change, fire, resolved, silence, webhook

Handler = Callable[[httpx.Request], httpx.Response]
Make = Callable[..., Dispatcher]


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A MockTransport handler answering from ``answers`` (then 200) and keeping every request."""

    def __init__(self, *answers: int | Exception, headers: dict[str, str] | None = None) -> None:
        self.answers = list(answers)
        self.headers = headers or {}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else 200
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, headers=self.headers)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]


def _settings(*receivers: Any, **retry: Any) -> NotifySettings:
    policy = RetrySettings(**{"initial_seconds": 1.0, "max_seconds": 60.0, "jitter": 0.0, **retry})
    return NotifySettings(receivers=list(receivers), retry=policy)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def make(queue: NotificationStore, clock: Clock) -> AsyncIterator[Make]:
    made: list[Dispatcher] = []

    def build(settings: NotifySettings, handler: Handler, **kw: Any) -> Dispatcher:
        store = kw.pop("store", queue)
        d = Dispatcher(
            settings, store, transport=httpx.MockTransport(handler), clock=clock, rng=random.Random(1), **kw
        )
        made.append(d)
        return d

    yield build
    for d in made:
        await d.stop()


async def test_dispatcher_webhook_posts_payload_with_secret_headers(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    seen = Recorder()
    d = make(_settings(webhook(headers={"Authorization": "Bearer s3cret"})), seen)
    fire(alert_store, alert())

    done = await d.run_once()

    (request,) = seen.requests
    body = json.loads(request.content)
    (row,) = queue.notifications()
    assert (done.queued, done.delivered, done.failed) == (1, 1, 0)
    assert str(request.url) == "http://hooks.test/offsetguard"
    assert request.headers["authorization"] == "Bearer s3cret"
    assert request.headers["x-offsetguard-event"] == "firing"
    assert body["notification_id"] == row.id
    assert (body["event"], body["alert"]["id"]) == ("firing", "al-1")
    assert (row.state, row.attempts) == ("delivered", 1)


async def test_dispatcher_webhook_503_retried_after_backoff(
    alert_store: AlertStore, queue: NotificationStore, make: Make, clock: Clock
) -> None:
    seen = Recorder(503, 503)
    d = make(_settings(webhook()), seen)
    fire(alert_store, alert())

    await d.run_once()  # attempt 1 fails: retry in 1 s
    clock.now += 0.5
    await d.run_once()  # held: no request
    clock.now += 0.5
    await d.run_once()  # attempt 2 fails: retry in 2 s
    after_two = queue.notifications()[0]
    clock.now += 2
    await d.run_once()  # attempt 3 succeeds

    assert len(seen.requests) == 3
    assert (after_two.attempts, after_two.next_attempt_at, after_two.last_error) == (
        2,
        T0 + 3,
        "hook: HTTP 503: ",
    )
    assert queue.notifications()[0].state == "delivered"


async def test_dispatcher_receiver_down_one_probe_per_round(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    seen = Recorder(httpx.ConnectError("connection refused"))
    d = make(_settings(webhook()), seen)
    for n in range(3):
        fire(alert_store, alert(f"al-{n}", partition=n))

    await d.run_once()

    assert len(seen.requests) == 1
    assert [n.attempts for n in queue.notifications()] == [1, 0, 0]


async def test_dispatcher_refused_4xx_abandoned_next_row_sent(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    d = make(_settings(webhook()), Recorder(400, 200))
    fire(alert_store, alert("al-1"))
    fire(alert_store, alert("al-2", partition=9))

    await d.run_once()

    assert [(n.alert_id, n.state) for n in queue.notifications()] == [
        ("al-1", "abandoned"),
        ("al-2", "delivered"),
    ]


async def test_dispatcher_failed_and_abandoned_deliveries_logged_with_alert_and_receiver(
    alert_store: AlertStore, make: Make, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    d = make(_settings(webhook()), Recorder(503, 400))
    fire(alert_store, alert("al-1"))

    with caplog.at_level(logging.WARNING, logger="service.notify.dispatcher"):
        await d.run_once()  # 503: retried in 1 s
        clock.now += 1
        await d.run_once()  # 400: abandoned

    context = [(r.levelname, r.alert_id, r.receiver, r.event) for r in caplog.records]  # type: ignore[attr-defined]
    assert context == [("WARNING", "al-1", "hook", "firing"), ("ERROR", "al-1", "hook", "firing")]


async def test_dispatcher_retry_after_longer_than_backoff_respected(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    d = make(_settings(webhook()), Recorder(429, headers={"Retry-After": "30"}))
    fire(alert_store, alert())

    await d.run_once()

    assert queue.notifications()[0].next_attempt_at == T0 + 30


async def test_dispatcher_old_failing_row_abandoned(
    alert_store: AlertStore, queue: NotificationStore, make: Make, clock: Clock
) -> None:
    d = make(_settings(webhook(), give_up_after_seconds=10), Recorder(503, 503))
    fire(alert_store, alert())
    await d.run_once()

    clock.now += 11
    await d.run_once()

    assert queue.notifications()[0].state == "abandoned"


async def test_dispatcher_unconfigured_receiver_rows_abandoned(
    alert_store: AlertStore, queue: NotificationStore, make: Make, clock: Clock
) -> None:
    first = make(_settings(webhook("old")), Recorder(503))
    fire(alert_store, alert())
    await first.run_once()
    await first.stop()
    renamed = make(_settings(webhook("new")), Recorder())

    clock.now += 2
    await renamed.run_once()

    assert [(n.receiver, n.state) for n in queue.notifications()] == [
        ("old", "abandoned"),
        ("new", "delivered"),
    ]


async def test_dispatcher_silenced_alert_recorded_not_sent_until_silence_expires(
    alert_store: AlertStore, queue: NotificationStore, make: Make, clock: Clock
) -> None:
    seen = Recorder()
    d = make(_settings(webhook()), seen)
    queue.add_silence(silence(("group", "=~", "bill.*")))
    fire(alert_store, alert())

    await d.run_once()
    recorded = queue.notifications()
    queue.expire_silence("si-1", T0 + 5)
    clock.now += 5
    await d.run_once()

    assert [(n.state, n.silence_id) for n in recorded] == [("silenced", "si-1")]
    assert len(seen.requests) == 1
    assert seen.bodies()[0]["event"] == "firing"


async def test_dispatcher_alertmanager_newest_row_per_alert_with_end(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    seen = Recorder()
    d = make(_settings(alertmanager(resend_seconds=60)), seen)
    gone = fire(alert_store, alert("al-1"))
    change(alert_store, resolved(gone, T0 + 1), "resolved", T0 + 1)
    fire(alert_store, alert("al-2", partition=9))

    await d.run_once()

    (request,) = seen.requests
    (body,) = seen.bodies()
    assert str(request.url) == "http://am.test:9093/api/v2/alerts"
    assert [(a["annotations"]["alert_id"], a["endsAt"]) for a in body] == [
        ("al-1", "2023-11-14T22:13:21.000Z"),  # resolved: ends when it resolved
        ("al-2", "2023-11-14T22:17:20.000Z"),  # firing: 4 re-posts from now
    ]
    assert {n.state for n in queue.notifications()} == {"delivered"}


async def test_dispatcher_alertmanager_firing_reposted_every_resend(
    alert_store: AlertStore, make: Make, clock: Clock
) -> None:
    seen = Recorder()
    d = make(_settings(alertmanager(resend_seconds=60)), seen)
    fire(alert_store, alert())
    await d.run_once()  # the firing notification (and the first re-post check: not told yet)
    clock.now += 30
    await d.run_once()
    clock.now += 31
    await d.run_once()

    assert len(seen.requests) == 2
    reposted = seen.bodies()[1]
    assert [(a["labels"]["alertname"], a["endsAt"]) for a in reposted] == [
        ("offset_rewind", "2023-11-14T22:18:21.000Z")
    ]


async def test_dispatcher_restart_delivers_what_the_first_left(
    alert_store: AlertStore, queue: NotificationStore, make: Make, clock: Clock
) -> None:
    first = make(_settings(webhook()), Recorder(httpx.ConnectError("refused")))
    fire(alert_store, alert())
    await first.run_once()
    await first.stop()
    change(alert_store, resolved(alert(), T0 + 1), "resolved", T0 + 1)  # while no dispatcher runs
    seen = Recorder()
    second = make(_settings(webhook()), seen)

    clock.now += 5
    await second.run_once()

    assert [b["event"] for b in seen.bodies()] == ["firing", "resolved"]


async def test_dispatcher_started_listener_wakes_it(
    alert_store: AlertStore, queue: NotificationStore, make: Make
) -> None:
    seen = Recorder()
    d = Dispatcher(
        NotifySettings(receivers=[webhook()], poll_seconds=60), queue, transport=httpx.MockTransport(seen)
    )
    await d.start()
    try:
        await _until(lambda: True)  # the first round has run (nothing to do)
        fire(alert_store, alert())
        await d.on_alerts([])
        await _until(lambda: len(seen.requests) == 1)
    finally:
        await d.stop()

    assert queue.notifications()[0].state == "delivered"


async def _until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    await asyncio.sleep(0.1)
    while not check():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def _row() -> Notification:
    return Notification(7, "hook", "al-1", "firing", {"event": "firing"}, "pending", T0, 0, T0)


@pytest.mark.parametrize(
    "upstream",
    [
        httpx.ConnectError("refused"),
        httpx.ConnectTimeout("slow connect"),
        httpx.ReadTimeout("slow answer"),
        httpx.ReadError("reset"),
        httpx.RemoteProtocolError("garbage"),
        httpx.PoolTimeout("pool"),
        httpx.UnsupportedProtocol("gopher"),
    ],
)
async def test_send_webhook_upstream_error_translated(upstream: Exception) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise upstream

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(DeliveryError) as caught:
            await send_webhook(client, webhook(), _row())

    assert caught.value.__cause__ is upstream
    assert (caught.value.receiver, caught.value.status, caught.value.retryable) == ("hook", None, True)


async def test_dispatcher_reads_firing_alerts_only_when_a_catch_up_can_find_any(
    alert_store: AlertStore,
    queue: NotificationStore,
    make: Make,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from store import notify_rows

    reads: list[float] = []
    real = notify_rows.firing_alerts

    def counted(conn: Any) -> Any:
        reads.append(clock.now)
        return real(conn)

    monkeypatch.setattr(notify_rows, "firing_alerts", counted)
    seen = Recorder()
    d = make(_settings(webhook()), seen)
    queue.add_silence(silence(("cluster", "=", "prod"), ends=T0 + 30))
    fire(alert_store, alert())
    for _ in range(3):
        await d.run_once()
        clock.now += 5
    assert reads == [T0] and seen.requests == []  # the first round only; the alert is silenced
    clock.now = T0 + 31  # the silence ended: the alert it held back is due
    await d.run_once()
    await d.run_once()
    assert reads == [T0, T0 + 31]
    assert [(r["event"], r["alert"]["id"]) for r in seen.bodies()] == [("firing", "al-1")]


async def test_dispatcher_without_receivers_never_reads_firing_alerts(
    alert_store: AlertStore, queue: NotificationStore, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store import notify_rows

    monkeypatch.setattr(notify_rows, "firing_alerts", lambda conn: pytest.fail("firing alerts read"))
    d = make(_settings(), Recorder())
    fire(alert_store, alert())
    await d.run_once()
    await d.run_once()
    assert queue.notifications() == []
