"""Prometheus exposition: ``GET /metrics``, rendered off the event loop, written in slices.

A 100,000-series exposition is megabytes even gzipped; one ``send()`` of it on loopback holds the event
loop for milliseconds while the kernel copies it through. Bodies above :data:`SLICE_BYTES` go out as
slices of that size with a yield to the loop after each, so other requests are served in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from service.metrics.endpoint import MetricsEndpoint

router = APIRouter(tags=["metrics"])

SLICE_BYTES = 256 * 1024


@router.get("/metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """Every family of docs/metrics.md; gzip when the client accepts it."""
    endpoint: MetricsEndpoint = request.app.state.metrics
    client = request.client.host if request.client else None  # each scraper has its own cadence
    rendered = await endpoint.scrape(
        request.headers.get("accept"), request.headers.get("accept-encoding"), client
    )
    headers = {"Vary": "Accept-Encoding"}
    if rendered.content_encoding:
        headers["Content-Encoding"] = rendered.content_encoding
    if len(rendered.body) <= SLICE_BYTES:
        return Response(rendered.body, media_type=rendered.content_type, headers=headers)
    headers["Content-Length"] = str(len(rendered.body))
    body = slices(rendered.body, SLICE_BYTES)
    return StreamingResponse(body, media_type=rendered.content_type, headers=headers)


async def slices(body: bytes, size: int = SLICE_BYTES) -> AsyncIterator[memoryview]:
    """``body`` in ``size`` pieces (no copies), the event loop free to run other work between them."""
    view = memoryview(body)
    for start in range(0, len(view), size):
        if start:
            await asyncio.sleep(0)
        yield view[start : start + size]
