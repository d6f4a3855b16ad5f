"""The store refuses writes while an incident happens: detection and notifications go on from memory,
the metrics say so (``/readyz``: tests/service/test_readiness_store.py), and once the disk takes writes
again the alert lands once, with its transitions in order, and nothing is notified twice."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from collectors.errors import StoreWriteError
from service.detection.backlog import AlertBacklog
from service.detection.loop import DetectionLoop
from service.detection.tail_sink import DetectionTailSink
from service.metrics.sources import store_figures
from service.metrics.store_health import store_families
from service.notify.dispatcher import Dispatcher
from service.settings import DetectionSettings, NotifySettings
from service.state import LatestObservations
from store import Store
from store.alert_records import AlertWrite
from store.alerts import AlertStore
from store.notifications import NotificationStore
from store.settings import StoreSettings
from tests.service.detection.builders import C, commit_event
from tests.service.notify.builders import T0, alert, webhook

FAST = DetectionSettings(debounce_seconds=0.05, state_save_seconds=3600)


@dataclass
class Parts:
    store: Store
    alerts: AlertStore
    queue: NotificationStore
    dispatcher: Dispatcher
    loop: DetectionLoop
    requests: list[httpx.Request]

    def writers(self) -> list[sqlite3.Connection]:
        # the seam: each store class's own writer connection (a read-only file or volume refuses the same)
        return [self.store._writer, self.alerts._conn, self.queue._conn]

    def refuse_writes(self, refuse: bool = True) -> None:
        for conn in self.writers():
            conn.execute(f"PRAGMA query_only = {'ON' if refuse else 'OFF'}")


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[Parts]:
    async with _wired(tmp_path, FAST) as wired:
        yield wired


@contextlib.asynccontextmanager
async def _wired(tmp_path: Path, detection: DetectionSettings) -> AsyncIterator[Parts]:
    settings = StoreSettings(path=tmp_path / "og.db")
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200)

    with (
        Store.open(settings) as store,
        AlertStore.open(settings) as alerts,
        NotificationStore.open(settings) as queue,
    ):
        alerts.health = queue.health = store.health  # as service.runtime shares it
        store.health.settle_seconds = 0.0  # healthy at the first write that commits
        notify = NotifySettings(receivers=[webhook()])
        dispatcher = Dispatcher(notify, queue, transport=httpx.MockTransport(answer))
        loop = DetectionLoop(
            C,
            detection,
            latest=LatestObservations(),
            alerts=alerts,
            tail_live=lambda: True,
            listeners=[dispatcher.on_alerts],
            unstored_listeners=[dispatcher.on_unstored],
        )
        await loop.start()
        try:
            yield Parts(store, alerts, queue, dispatcher, loop, requests)
        finally:
            await loop.stop()
            await dispatcher.stop()


async def _rewind_unstored(parts: Parts) -> None:
    """A rewind evaluated while the store refuses writes, its transition handed to the dispatcher."""
    t = int(time.time() * 1000)
    await DetectionTailSink(parts.loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
    for _ in range(300):
        if parts.dispatcher.kept():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the rewind was not handed to the dispatcher")


async def test_store_refusing_writes_alert_notified_once_then_stored_once(parts: Parts) -> None:
    parts.refuse_writes()
    await _rewind_unstored(parts)
    await parts.dispatcher.run_once()
    await parts.dispatcher.run_once()  # nothing sent twice while still failing

    assert parts.alerts.firing(C) == ()  # not on disk
    assert len(parts.loop.backlog) == 1  # the "fired" write, kept
    [sent] = [json.loads(r.content) for r in parts.requests]
    assert (sent["event"], sent["alert"]["kind"]) == ("firing", "offset_rewind")
    assert not parts.store.health.healthy

    parts.refuse_writes(False)  # space returns
    await parts.loop.evaluate_now()  # the next evaluation writes what was kept first
    await parts.dispatcher.run_once()
    await parts.dispatcher.run_once()

    [stored] = parts.alerts.firing(C)
    assert stored.id == sent["alert"]["id"]
    assert [t.transition for t in parts.alerts.transitions(stored.id)] == ["fired"]
    [row] = parts.queue.notifications(alert_id=stored.id)
    assert (row.receiver, row.event, row.state, row.attempts) == ("hook", "firing", "delivered", 1)
    assert len(parts.requests) == 1  # the fan-out passed over the transition notified from memory
    assert len(parts.loop.backlog) == 0
    assert parts.store.health.healthy


async def test_store_refusing_writes_metrics_say_so(parts: Parts) -> None:
    runtime = SimpleNamespace(store=parts.store, detections=[parts.loop], notifier=parts.dispatcher)

    parts.refuse_writes()
    await _rewind_unstored(parts)
    failing = _samples(runtime)
    parts.refuse_writes(False)
    await parts.loop.evaluate_now()
    await parts.dispatcher.run_once()
    healthy = _samples(runtime)

    assert failing["offsetguard_store_healthy"] == 0
    assert failing["offsetguard_store_write_failures_total"] >= 1
    assert (failing["backlog:alert_writes"], failing["backlog:notifications"]) == (1, 1)
    assert healthy["offsetguard_store_healthy"] == 1
    assert (healthy["backlog:alert_writes"], healthy["backlog:notifications"]) == (0, 0)


def _samples(runtime: object) -> dict[str, float]:
    out = {}
    for family in store_families(store_figures(runtime)):
        for s in family.samples:
            out[f"backlog:{s.labels['kind']}" if s.labels else s.name] = s.value
    return out


async def test_store_refusing_writes_resolve_notified_once_then_stored_once(tmp_path: Path) -> None:
    quiet = DetectionSettings(debounce_seconds=0.05, state_save_seconds=3600, quiet_period_seconds=0.3)
    async with _wired(tmp_path, quiet) as parts:
        t = int(time.time() * 1000)
        await DetectionTailSink(parts.loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
        for _ in range(300):
            if parts.alerts.firing(C):
                break
            await asyncio.sleep(0.01)
        await parts.dispatcher.run_once()  # the firing notification, from the store
        [fired] = parts.alerts.firing(C)

        parts.refuse_writes()
        await asyncio.sleep(0.35)  # the rewind goes quiet: resolved at the next evaluation, in memory
        await parts.loop.evaluate_now()
        await parts.dispatcher.run_once()
        await parts.dispatcher.run_once()
        during = [json.loads(r.content)["event"] for r in parts.requests]

        parts.refuse_writes(False)
        await parts.loop.evaluate_now()
        await parts.dispatcher.run_once()
        await parts.dispatcher.run_once()

        history = [t.transition for t in parts.alerts.transitions(fired.id)]
        rows = [(n.event, n.state) for n in parts.queue.notifications(alert_id=fired.id)]
        assert during == ["firing", "resolved"]  # the resolve reached the receiver told it fires
        assert parts.alerts.firing(C) == ()
        assert history == ["fired", "resolved"]
        assert rows == [("firing", "delivered"), ("resolved", "delivered")]
        assert len(parts.requests) == 2  # not sent again once stored


def test_backlog_disk_full_kept_in_order_and_flushed_once(tmp_path: Path) -> None:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        conn = alerts._conn  # the seam: its writer, capped at its size (SQLITE_FULL on a new page)
        old = conn.execute("PRAGMA max_page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        big = alert("al-1", evidence={"records": "x" * 20_000}, cluster=C)  # overflow pages: a new page
        backlog = AlertBacklog()
        with pytest.raises(StoreWriteError):
            alerts.update_firing(C, lambda f, r: [AlertWrite(big, True, "fired")], T0)
        backlog.start(alerts.firing(C))
        backlog.plan(lambda f, r: [AlertWrite(big, True, "fired")], T0)
        moved = alert("al-1", evidence={"records": "y" * 20_000}, cluster=C, at=T0 + 1, occurrences=2)
        backlog.plan(lambda f, r: [AlertWrite(moved, False, "repeated")] if f else [], T0 + 1)
        refreshed = alert("al-1", evidence={"records": "z" * 20_000}, cluster=C, at=T0 + 2, occurrences=2)
        backlog.plan(lambda f, r: [AlertWrite(refreshed, False, None)], T0 + 2)

        with pytest.raises(StoreWriteError, match="database or disk is full"):
            backlog.flush(alerts, C)
        assert len(backlog) == 3  # nothing lost, nothing written

        conn.execute(f"PRAGMA max_page_count = {old}")
        assert backlog.flush(alerts, C) == 3
        assert backlog.flush(alerts, C) == 0  # once

        [stored] = alerts.firing(C)
        history = alerts.transitions("al-1")
        assert [t.transition for t in history] == ["fired", "repeated"]
        assert [t.at for t in history] == [T0, T0 + 1]
        assert all(t.detail["notified_from_memory"] for t in history)
        assert (stored.occurrences, stored.evidence["records"][0]) == (2, "z")  # the newest refresh last
