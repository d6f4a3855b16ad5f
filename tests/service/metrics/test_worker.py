"""The render worker process: same bytes as the in-process render, the API not blocked while it works."""

from __future__ import annotations

import asyncio
import gzip
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.proctree import descendants
from collectors.tail_model import TailFigures
from service.metrics import MetricsOptions, ScrapeInputs, build_registry, render
from service.metrics.endpoint import PROMETHEUS_HEADERS, MetricsEndpoint
from service.metrics.snapshot import compact
from service.metrics.worker import RenderWorker
from service.scheduler import CollectorStatus
from tests.service.metrics import builders as b
from tests.service.metrics.serving import serving
from tests.service.metrics.test_route import LAG_LINE, _app


def _inputs() -> ScrapeInputs:
    statuses = [
        CollectorStatus(
            "offsets", "c1", 10.0, runs=5, failures=1, last_success_at=b.NOW - 5, last_duration=0.25
        ),
        CollectorStatus("groups", "c1", 5.0, runs=2, failures=2),
    ]
    tail = TailFigures("c1", "running", True, 2, 50, 45, 2.5, {1: 3, 0: 2}, 4, 1, 0, None, None)
    return ScrapeInputs(
        clusters=[b.cluster_inputs(), b.ClusterInputs("c2")],
        statuses=statuses,
        stale_after_intervals=3.0,
        tails=[tail],
        alerts=b.FakeAlerts(),
        log_end_times=b.FakeLogEndTimes(b.STORE_TIMES),
    )


@pytest.fixture
def worker() -> Iterator[RenderWorker]:
    w = RenderWorker()
    try:
        yield w
    finally:
        w.close()


@pytest.mark.parametrize("accept", [None, "application/openmetrics-text; version=1.0.0"])
def test_worker_render_byte_for_byte_in_process_render(worker: RenderWorker, accept: str | None) -> None:
    inputs = _inputs()
    expected = render(build_registry(lambda: inputs, clock=lambda: b.NOW), inputs, accept=accept)
    got = worker.render(compact(inputs, b.NOW), accept, None)
    assert got == expected
    assert LAG_LINE.encode() in got.body.splitlines()
    assert b"offsetguard_alerts_firing" in got.body and b"offsetguard_tail_lag" in got.body
    assert b"offsetguard_group_lag_seconds" in got.body


def test_worker_render_options_cross_the_pipe_same_bytes(worker: RenderWorker) -> None:
    inputs = _inputs()
    options = MetricsOptions(frozenset({"kafka_exporter"}), "topic")
    registry = build_registry(lambda: inputs, clock=lambda: b.NOW, options=options)
    got = worker.render(compact(inputs, b.NOW), None, None, options)
    assert got == render(registry, inputs)
    assert b"kafka_consumergroup_lag_sum{" in got.body
    assert b"kafka_consumergroup_lag{" not in got.body and b"offsetguard_group_" not in got.body


def test_one_worker_renders_changing_scrapes_as_the_in_process_render(worker: RenderWorker) -> None:
    """A long-lived worker carries nothing from one request to the next: clusters and rows that come and
    go render exactly what a fresh in-process render writes."""
    full = _inputs()
    one = ScrapeInputs(
        clusters=[b.ClusterInputs("c2")],
        statuses=full.statuses,
        stale_after_intervals=3.0,
        tails=[],
        alerts=None,
        log_end_times=None,
    )
    for inputs in (full, one, full, full):
        expected = render(build_registry(lambda i=inputs: i, clock=lambda: b.NOW), inputs)
        assert worker.render(compact(inputs, b.NOW), None, None) == expected


def test_worker_render_gzip_decompresses_to_in_process_body(worker: RenderWorker) -> None:
    inputs = _inputs()
    expected = render(build_registry(lambda: inputs, clock=lambda: b.NOW), inputs, accept_encoding="gzip")
    got = worker.render(compact(inputs, b.NOW), None, "gzip")
    assert (got.content_type, got.content_encoding) == (expected.content_type, "gzip")
    assert gzip.decompress(got.body) == gzip.decompress(expected.body)


def test_endpoint_worker_killed_scrape_falls_back_then_new_worker() -> None:
    inputs = _inputs()
    endpoint = MetricsEndpoint.build(lambda: inputs, clock=lambda: b.NOW, cache_ttl_s=0, render_worker=True)
    expected = render(endpoint.registry, inputs)
    worker = endpoint.worker
    assert worker is not None

    async def scrape() -> Any:
        return await endpoint.scrape(None, None)

    try:
        assert asyncio.run(scrape()) == expected
        first = worker.pid
        assert first is not None and worker.starts == 1
        os.kill(first, signal.SIGKILL)
        time.sleep(0.2)
        assert asyncio.run(scrape()) == expected  # a new worker (or in process): same answer
        assert asyncio.run(scrape()) == expected
        assert worker.starts == 2 and worker.pid not in (None, first)
    finally:
        endpoint.close()
    assert worker.pid is None


def test_endpoint_warm_up_starts_the_worker_before_the_first_scrape() -> None:
    inputs = _inputs()
    endpoint = MetricsEndpoint.build(lambda: inputs, clock=lambda: b.NOW, cache_ttl_s=0, render_worker=True)
    worker = endpoint.worker
    assert worker is not None and worker.pid is None
    try:
        endpoint.warm_up()  # returns at once: the worker starts on the metrics thread
        deadline = time.monotonic() + 60
        while worker.pid is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert worker.pid is not None and worker.starts == 1
        assert asyncio.run(endpoint.scrape(None, None)) == render(endpoint.registry, inputs)
        assert worker.starts == 1  # the scrape found it running
    finally:
        endpoint.close()
    assert worker.pid is None


def test_endpoint_warm_up_in_process_render_starts_nothing() -> None:
    endpoint = MetricsEndpoint.build(lambda: _inputs(), clock=lambda: b.NOW)
    assert endpoint.worker is None  # the default: rendered on the metrics thread
    endpoint.warm_up()  # nothing to start, nothing raised
    endpoint.close()
    assert endpoint.worker is None  # close() makes no worker either


def test_endpoint_in_process_render_same_body_as_worker() -> None:
    """The default (no worker) and ``render_worker`` give the same bytes for the same picture."""
    inputs = _inputs()
    here = MetricsEndpoint.build(lambda: inputs, clock=lambda: b.NOW, cache_ttl_s=0)
    there = MetricsEndpoint.build(lambda: inputs, clock=lambda: b.NOW, cache_ttl_s=0, render_worker=True)
    trims: list[str] = []
    here.trim = lambda: trims.append("here")
    there.trim = lambda: trims.append("there")
    try:
        for accept, encoding in ((None, None), (PROMETHEUS_HEADERS[0], "gzip")):
            a = asyncio.run(here.scrape(accept, encoding))
            z = asyncio.run(there.scrape(accept, encoding))
            assert (a.content_type, a.content_encoding) == (z.content_type, z.content_encoding)
            plain = gzip.decompress if encoding else (lambda body: body)
            assert plain(a.body) == plain(z.body)
        assert here.worker is None and there.worker is not None and there.worker.starts == 1
        assert trims == ["here", "here"]  # in process only: the worker's memory is its own
    finally:
        here.close()
        there.close()


def test_metrics_route_slow_worker_render_healthz_not_blocked() -> None:
    app = _app()
    endpoint: MetricsEndpoint = app.state.metrics
    worker = RenderWorker(delay_s=2.0)  # busy-loops 2 s in the worker before each render
    endpoint.worker = worker
    results: dict[str, Any] = {}
    with serving(app) as base:

        def scrape() -> None:
            t0 = time.monotonic()
            results["metrics"] = httpx.get(
                f"{base}/metrics", headers={"Accept-Encoding": "identity"}, timeout=60
            )
            results["metrics_s"] = time.monotonic() - t0

        scraper = threading.Thread(target=scrape)
        scraper.start()
        assert worker.busy.wait(30), "the worker never got the render"
        t0 = time.monotonic()
        health = httpx.get(f"{base}/healthz", timeout=30)
        health_s = time.monotonic() - t0
        still_rendering = worker.busy.is_set()
        scraper.join(60)
    pid = worker.pid
    assert health.status_code == 200
    assert health_s < 0.5, f"/healthz took {health_s:.2f} s while the worker rendered"
    assert still_rendering  # the render really was in progress meanwhile
    assert results["metrics"].status_code == 200
    assert LAG_LINE in results["metrics"].text.splitlines()
    assert endpoint._worker_failures == 0 and pid is None  # served by the worker; stopped by the lifespan


def test_worker_is_one_child_process_and_exits_when_the_parents_end_closes() -> None:
    worker = RenderWorker()
    before = set(descendants(os.getpid()))
    try:
        worker.render(compact(_inputs(), b.NOW), None, None)
        pid = worker.pid
        assert pid is not None
        started = [p for p in descendants(os.getpid()) if p not in before]
        assert started == [pid]  # no resource tracker or other helper beside it
        process, conn = worker._process, worker._conn
        assert process is not None and conn is not None
        conn.close()  # what the worker sees when its parent dies
        assert process.wait(10) == 0
    finally:
        worker.close()
