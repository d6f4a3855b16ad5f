"""Prometheus exposition: ``GET /metrics``, rendered off the event loop."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.metrics.endpoint import MetricsEndpoint

router = APIRouter(tags=["metrics"])


@router.get("/metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """Every family of docs/metrics.md; gzip when the client accepts it."""
    endpoint: MetricsEndpoint = request.app.state.metrics
    rendered = await endpoint.scrape(request.headers.get("accept"), request.headers.get("accept-encoding"))
    headers = {"Vary": "Accept-Encoding"}
    if rendered.content_encoding:
        headers["Content-Encoding"] = rendered.content_encoding
    return Response(rendered.body, media_type=rendered.content_type, headers=headers)
