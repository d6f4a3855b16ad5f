"""``GET /metrics`` through the real app factory: families served, gzip, fresh registry, off the loop."""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from service.app import create_app
from service.metrics import render
from service.metrics.endpoint import PROMETHEUS_HEADERS, negotiate
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from tests.service.metrics import builders as b
from tests.service.metrics.serving import serving

LAG_LINE = 'kafka_consumergroup_lag{cluster="c1",consumergroup="billing",partition="0",topic="orders"} 10.0'


ALL_FAMILIES = ("offsetguard", "kafka_exporter", "kafka_lag_exporter")


def _app(**overrides: Any) -> FastAPI:
    latest = LatestObservations()
    for obs in (b.metadata(), b.offsets(), b.groups(), b.committed()):
        asyncio.run(latest.put(obs))

    def factory(settings: Settings) -> Runtime:
        return Runtime(settings, store=None, latest=latest, jobs=[])

    # every family set unless the test says otherwise (the settings default to offsetguard's own)
    overrides.setdefault("metrics", {"families": list(ALL_FAMILIES)})
    settings = load_settings(clusters=[{"name": "c1", "bootstrap_servers": ["127.0.0.1:9"]}], **overrides)
    return create_app(settings, runtime_factory=factory, clock=lambda: b.NOW)


def test_metrics_route_running_app_serves_latest_observations() -> None:
    with TestClient(_app()) as client:
        response = client.get("/metrics", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert LAG_LINE in response.text.splitlines()


def test_metrics_route_metrics_settings_choose_families_and_granularity() -> None:
    app = _app(metrics={"families": ["kafka_exporter", "offsetguard"], "granularity": "group"})
    with TestClient(app) as client:
        lines = client.get("/metrics", headers={"Accept-Encoding": "identity"}).text.splitlines()
    assert 'offsetguard_group_lag_messages{cluster="c1",group="billing"} 5.0' in lines
    assert 'kafka_consumergroup_lag_sum{cluster="c1",consumergroup="billing",topic="orders"} 5.0' in lines
    assert LAG_LINE not in lines
    assert not [line for line in lines if line.startswith("kafka_consumergroup_group_")]


def test_metrics_route_gzip_accepted_gzip_body() -> None:
    with TestClient(_app()) as client:
        response = client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert LAG_LINE in response.text.splitlines()  # httpx decoded it, so it was valid gzip


def test_metrics_route_raw_gzip_body_decompresses_to_exposition() -> None:
    with (
        TestClient(_app()) as client,
        client.stream("GET", "/metrics", headers={"Accept-Encoding": "gzip"}) as r,
    ):
        raw = b"".join(r.iter_raw())
    assert LAG_LINE.encode() in gzip.decompress(raw).splitlines()


def test_create_app_fresh_registry_nothing_global() -> None:
    one, two = _app(), _app()
    assert one.state.metrics.registry is not two.state.metrics.registry
    names = {family.name for family in REGISTRY.collect()}
    assert not {n for n in names if n.startswith(("offsetguard_", "kafka_"))}


def test_metrics_route_slow_render_healthz_not_blocked() -> None:
    """/healthz is answered while a render is still under way: the render waits for the test to let it
    go, which happens only after /healthz answered (no timing: a render on the event loop would hold
    /healthz until the 30 s timeout, and the render would never have been let go)."""
    app = _app()
    rendering, release = threading.Event(), threading.Event()
    endpoint = app.state.metrics

    def slow_render(*args: Any, **kwargs: Any) -> Any:
        rendering.set()
        assert release.wait(30), "the render was never let go"  # CPU-bound in real life
        return render(*args, **kwargs)

    endpoint.render = slow_render
    results: dict[str, Any] = {}
    with serving(app) as base:

        def scrape() -> None:
            results["metrics"] = httpx.get(f"{base}/metrics", timeout=60)

        scraper = threading.Thread(target=scrape)
        scraper.start()
        try:
            assert rendering.wait(10), "render never started"
            health = httpx.get(f"{base}/healthz", timeout=10)
            still_rendering = not release.is_set() and "metrics" not in results
        finally:
            release.set()
            scraper.join(30)
    assert health.status_code == 200
    assert still_rendering  # /healthz answered while the render was held
    assert results["metrics"].status_code == 200


def test_metrics_route_big_body_sliced_whole_with_content_length(monkeypatch: Any) -> None:
    from service.routers import metrics as route

    monkeypatch.setattr(route, "SLICE_BYTES", 100)
    with TestClient(_app()) as client:
        plain = client.get("/metrics", headers={"Accept-Encoding": "identity"})
        zipped = client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert len(plain.content) > 1000
    assert plain.headers["content-length"] == str(len(plain.content))
    assert "transfer-encoding" not in plain.headers
    assert LAG_LINE in plain.text.splitlines()
    assert LAG_LINE in zipped.text.splitlines()  # decoded from the sliced gzip body


def test_slices_cover_body_in_order_without_gaps() -> None:
    from service.routers.metrics import slices

    async def collect() -> list[bytes]:
        return [bytes(s) async for s in slices(bytes(range(250)), 64)]

    got = asyncio.run(collect())
    assert [len(s) for s in got] == [64, 64, 64, 58]
    assert b"".join(got) == bytes(range(250))


def test_metrics_route_serve_first_scrape_gets_the_standing_body_cadence_per_client() -> None:
    """As ``offsetguard serve`` runs it (warmed up): a body is rendered for Prometheus's headers as soon as
    the observations are there, and Prometheus's first scrape gets it; the scraper's cadence is its own."""
    app = _app()
    endpoint = app.state.metrics
    assert endpoint.worker is None  # the default: rendered in process
    endpoint.warm_up()
    key = negotiate(*PROMETHEUS_HEADERS)
    with TestClient(app) as client:
        deadline = time.monotonic() + 10
        while (body := endpoint._cached.get(key)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert body is not None and body.standing
        accept, encoding = PROMETHEUS_HEADERS
        response = client.get("/metrics", headers={"Accept": accept, "Accept-Encoding": encoding})
        assert endpoint._cached.get(key) is body  # answered by it: no render since
        assert list(endpoint._cadences) == [("testclient", key)]  # TestClient's address
    assert response.status_code == 200
    assert response.content == gzip.decompress(body.rendered.body)


@pytest.mark.parametrize("render_worker", [False, True])
def test_metrics_route_accept_prometheus_client_cannot_read_gets_plain_text(render_worker: bool) -> None:
    """``version=abc`` makes prometheus_client's negotiation raise: served as if no Accept was sent (by
    the worker too, when it renders)."""
    app = _app(metrics={"families": list(ALL_FAMILIES), "render_worker": render_worker})
    assert (app.state.metrics.worker is not None) is render_worker
    with TestClient(app) as client:
        for accept in ("application/openmetrics-text;version=abc", "text/plain;version=x.y"):
            response = client.get("/metrics", headers={"Accept": accept, "Accept-Encoding": "identity"})
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
            assert LAG_LINE in response.text.splitlines()
    assert app.state.metrics._worker_failures == 0
