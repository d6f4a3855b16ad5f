"""What ``/metrics`` needs, built once by the app factory: registry, snapshot source, render thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from prometheus_client.registry import CollectorRegistry

from service.metrics.collector import Source, build_registry
from service.metrics.exposition import Rendered, render
from service.metrics.sources import ScrapeInputs

Renderer = Callable[..., Rendered]  # signature of service.metrics.exposition.render


@dataclass(slots=True)
class MetricsEndpoint:
    """Renders on one dedicated thread: scrapes queue behind each other instead of piling onto the
    shared worker pool, and the event loop only takes the (cheap) snapshot."""

    registry: CollectorRegistry
    source: Source
    render: Renderer = render
    _executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-render")
    )

    @classmethod
    def build(cls, source: Source, *, clock: Callable[[], float] = time.time) -> MetricsEndpoint:
        return cls(build_registry(source, clock=clock), source)

    async def scrape(self, accept: str | None, accept_encoding: str | None) -> Rendered:
        """Snapshot on the calling (event-loop) thread, render on the metrics thread."""
        inputs: ScrapeInputs = self.source()
        job = partial(self.render, self.registry, inputs, accept=accept, accept_encoding=accept_encoding)
        return await asyncio.get_running_loop().run_in_executor(self._executor, job)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
