"""``serve``'s start: the collectors run while the HTTP app is built, then a real uvicorn serves it on
loopback; the runtime is stopped once, whether the server ran or never started."""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass

import httpx
import pytest
import uvicorn

from cli.serve import http_server, serve
from service.runtime import Runtime
from service.scheduler import CollectorJob
from service.settings import Settings
from service.state import LatestObservations


@dataclass(frozen=True)
class Obs:
    cluster: str


class SignallingCollector:
    """Sets ``collecting`` (a thread-safe event) when its first collect starts."""

    name = "offsets"
    cluster = "c1"

    def __init__(self) -> None:
        self.collecting = threading.Event()

    async def collect(self) -> Obs:
        self.collecting.set()
        return Obs("c1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runtime(settings: Settings, collector: SignallingCollector, closed: list[str]) -> Runtime:
    job = CollectorJob(collector, interval=60)
    return Runtime(
        settings, store=None, latest=LatestObservations(), jobs=[job], closers=[lambda: closed.append("x")]
    )


async def test_serve_collectors_run_while_the_app_is_built_then_served_and_stopped_once() -> None:
    settings = Settings(http_port=_free_port())
    collector, closed, servers = SignallingCollector(), [], []
    collected_before_built: list[bool] = []

    def server_factory(s: Settings, runtime: Runtime) -> uvicorn.Server:
        # on the worker thread: the collector has started without waiting for the app
        collected_before_built.append(collector.collecting.wait(10.0))
        server = http_server(s, runtime)
        servers.append(server)
        return server

    task = asyncio.create_task(serve(settings, lambda s: _runtime(s, collector, closed), server_factory))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{settings.http_port}") as client:
        for _ in range(200):
            try:
                if (await client.get("/healthz")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert not task.done(), task
            await asyncio.sleep(0.05)
        ready = (await client.get("/readyz")).json()
    servers[0].should_exit = True
    await asyncio.wait_for(task, 30)

    assert collected_before_built == [True]
    assert [c["name"] for c in ready["collectors"]] == ["offsets"]  # the app serves the runtime built first
    assert ready["collectors"][0]["runs"] == 1  # started once, not again by the lifespan
    assert closed == ["x"]  # stopped by the lifespan; the second stop returned at once


async def test_serve_port_taken_exits_with_the_runtime_stopped() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = Settings(http_port=taken.getsockname()[1])
        collector, closed = SignallingCollector(), []
        with pytest.raises(SystemExit):  # uvicorn's, after its lifespan's shutdown
            await serve(settings, lambda s: _runtime(s, collector, closed))
    assert collector.collecting.is_set()
    assert closed == ["x"]


async def test_serve_app_that_cannot_be_built_stops_the_runtime_and_raises() -> None:
    collector, closed = SignallingCollector(), []

    def broken(s: Settings, runtime: Runtime) -> uvicorn.Server:
        raise RuntimeError("no app")

    with pytest.raises(RuntimeError, match="no app"):
        await serve(Settings(http_port=_free_port()), lambda s: _runtime(s, collector, closed), broken)
    assert closed == ["x"]  # no lifespan ever ran: serve stopped it
