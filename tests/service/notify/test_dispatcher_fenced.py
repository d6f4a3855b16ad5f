"""The dispatcher of a replica among several (issue 46): a send only after a fenced claim of its row and
while the lease's local monotonic deadline has not passed; the epoch in a header."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from collectors.errors import FencedError
from service.ha.leadership import ACTIVE, STANDBY, Leadership
from service.notify.dispatcher import EPOCH_HEADER, Dispatcher
from service.settings import NotifySettings
from store.alerts import AlertStore
from store.db import connect_to
from store.lease import Lease
from store.notifications import NotificationStore
from store.settings import StoreSettings
from tests.service.notify.builders import T0, alert, fire, webhook

LEASE = 10.0


class Monotonic:
    """A CLOCK_MONOTONIC the test moves (a SIGSTOP is time passing with the process doing nothing)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Replica:
    """One replica's lease, leadership and fenced notification store on the shared file."""

    def __init__(self, settings: StoreSettings, name: str, seconds: float = LEASE) -> None:
        self.monotonic = Monotonic()
        self.lease = Lease(lambda: connect_to(settings), name, seconds, monotonic=self.monotonic)
        self.leadership = Leadership(self.lease, renew_seconds=seconds / 5)
        self.queue = NotificationStore.open(settings)
        self.queue.guard = self.leadership.fence
        self.requests: list[httpx.Request] = []

    def dispatcher(self) -> Dispatcher:
        def handler(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return httpx.Response(200)

        settings = NotifySettings(receivers=[webhook()])
        return Dispatcher(
            settings,
            self.queue,
            transport=httpx.MockTransport(handler),
            clock=lambda: T0,
            rng=random.Random(1),
            fence=self.leadership,
        )

    def close(self) -> None:
        self.queue.close()
        self.lease.close()


@pytest.fixture
def replicas(store_settings: StoreSettings, alert_store: AlertStore) -> Iterator[Any]:
    made: list[Replica] = []

    def make(name: str, seconds: float = LEASE) -> Replica:
        made.append(Replica(store_settings, name, seconds))
        return made[-1]

    yield make
    for r in made:
        r.close()


async def test_dispatcher_fenced_active_sends_once_with_epoch_header(
    alert_store: AlertStore, replicas: Any
) -> None:
    a = replicas("a")
    await a.leadership.run_once()
    assert a.leadership.role == ACTIVE
    d = a.dispatcher()
    fire(alert_store, alert())

    done = await d.run_once()
    await d.run_once()

    (request,) = a.requests
    assert request.headers[EPOCH_HEADER] == "1"
    assert done.delivered == 1
    assert [n.state for n in a.queue.notifications()] == ["delivered"]
    await d.stop()


async def test_dispatcher_fenced_woken_past_monotonic_deadline_sends_nothing(
    alert_store: AlertStore, replicas: Any
) -> None:
    a = replicas("a")
    await a.leadership.run_once()
    d = a.dispatcher()
    fire(alert_store, alert())
    a.monotonic.now += LEASE  # SIGSTOP for the lease's length: the deadline (lease - margin) has passed

    done = await d.run_once()

    assert (a.requests, done.delivered) == ([], 0)
    assert [n.state for n in a.queue.notifications()] == ["pending"]  # for the active replica to send
    await d.halt()


async def test_dispatcher_fenced_taken_over_claims_nothing_new_active_sends_once(
    alert_store: AlertStore, replicas: Any
) -> None:
    a, b = replicas("a", 0.3), replicas("b", 0.3)
    await a.leadership.run_once()
    old = a.dispatcher()
    fire(alert_store, alert())
    await old.run_once()  # queued and sent by a
    fire(alert_store, alert("al-2", partition=2))
    # a is frozen past its lease on the database's clock and b takes over; a's (fake) monotonic clock did
    # not move, so its local deadline still looks good: only the database's fencing stops it.
    time.sleep(0.4)
    await b.leadership.run_once()
    assert (b.leadership.role, b.lease.epoch) == (ACTIVE, 2)
    new = b.dispatcher()
    await new.run_once()  # b queues al-2's notification and sends it

    assert a.lease.valid()
    with pytest.raises(FencedError):  # its first write (queueing) is refused; nothing is claimed or sent
        await old.run_once()

    assert [r.headers[EPOCH_HEADER] for r in a.requests] == ["1"]  # al-1 only, before the freeze
    assert [r.headers[EPOCH_HEADER] for r in b.requests] == ["2"]
    assert a.leadership.fence.refused >= 1
    assert a.lease.epoch is None  # forgotten: the leadership steps down at its next step
    await a.leadership.run_once()
    assert a.leadership.role == STANDBY
    assert sorted(n.state for n in b.queue.notifications()) == ["delivered", "delivered"]
    await old.halt()
    await new.stop()
