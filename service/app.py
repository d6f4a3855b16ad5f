"""The FastAPI app factory. Nothing connects or registers at import time: everything is built here."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from service.api.errors import install_error_handlers
from service.api.paths import SegmentPreserving
from service.metrics import MetricsEndpoint, inputs_from_runtime
from service.routers import (
    alerts,
    clusters,
    drills,
    groups,
    health,
    metrics,
    reset_plan,
    silences,
    snapshots,
    topics,
    ui,
)
from service.runtime import Runtime, build_runtime
from service.settings import Settings

log = logging.getLogger(__name__)

RuntimeFactory = Callable[[Settings], Runtime]


def create_app(
    settings: Settings,
    *,
    runtime_factory: RuntimeFactory = build_runtime,
    clock: Callable[[], float] = time.time,
) -> FastAPI:
    """Assemble the service: runtime (store, collectors, scheduler) started and stopped by the lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = runtime_factory(settings)
        app.state.runtime = runtime
        app.state.metrics.watch()  # standing renders for the first scrapes (after serve's warm_up)
        await runtime.start(
            before_detection=app.state.metrics.first_picture, metrics_quiet_for=app.state.metrics.quiet_for
        )
        log.info("offsetguard started: %d cluster(s)", len(settings.clusters))
        try:
            yield
        finally:
            try:
                await runtime.stop()
            finally:
                app.state.metrics.close()  # the render thread and worker process
            log.info("offsetguard stopped")

    app = FastAPI(title="offsetguard", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.clock = clock
    # Fresh registry per app; the collector reads app.state.runtime at scrape time, not before.
    app.state.metrics = MetricsEndpoint.build(
        lambda: inputs_from_runtime(getattr(app.state, "runtime", None)),
        clock=clock,
        options=settings.metrics.options(),
        render_worker=settings.metrics.render_worker,
    )
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(silences.router)
    # The on-call API: JSON errors everywhere, names with '/' or '%' routed as one path segment.
    install_error_handlers(app)
    for router in (alerts, clusters, groups, reset_plan, topics, snapshots, drills, ui):
        app.include_router(router.router)
    app.add_middleware(SegmentPreserving)
    return app
