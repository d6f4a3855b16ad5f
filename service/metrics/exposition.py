"""Rendering a registry to an HTTP body: format negotiated by prometheus_client, optional gzip.

Bulk families (:class:`service.metrics.fast.FastGauge`) are written by :func:`service.metrics.fast.encode`,
the rest by prometheus_client.

Blocking and CPU-bound (100k series take about a second): call it from a worker thread, never on the
event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from isal import isal_zlib
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import CollectorRegistry

from service.metrics.collector import pinned
from service.metrics.fast import encode
from service.metrics.sources import ScrapeInputs

# The body is gzipped by ISA-L (python-isal), whose level 1 compresses 22.6 MB of exposition text (20,000
# partitions, 50,000 group-partitions) in ~10 ms to 0.84 MB, where zlib's level 1 takes ~64 ms for 0.90 MB:
# a render of that size is ~0.2 CPU s, once a scrape. The stream is standard gzip (any client inflates it).
GZIP_LEVEL = 1


def gzip_compressor() -> isal_zlib.Compress:
    """A compressor writing one gzip stream (wbits 31) at :data:`GZIP_LEVEL`."""
    return isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, 31)


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    content_type: str
    content_encoding: str | None  # "gzip" or None


def accepts_gzip(accept_encoding: str | None) -> bool:
    """True when ``Accept-Encoding`` lists gzip with a non-zero quality."""
    for part in (accept_encoding or "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip()
            try:
                return not q or float(q) > 0
            except ValueError:
                return True
    return False


def render(
    registry: CollectorRegistry,
    inputs: ScrapeInputs | None = None,
    *,
    accept: str | None = None,
    accept_encoding: str | None = None,
) -> Rendered:
    """Render ``registry`` for a client sending these headers (its collectors reading ``inputs`` if given)."""
    encoder, content_type = choose_encoder(accept or "")
    openmetrics = content_type.startswith("application/openmetrics-text")
    gzipped = accepts_gzip(accept_encoding)
    parts: list[bytes] = []
    compressor = gzip_compressor()
    sink = (lambda chunk: parts.append(compressor.compress(chunk))) if gzipped else None
    if inputs is None:
        body = encode(registry, encoder, openmetrics=openmetrics, sink=sink)
    else:
        with pinned(inputs):
            body = encode(registry, encoder, openmetrics=openmetrics, sink=sink)
    if gzipped:  # compressed as it was written: the text is never whole
        parts.append(compressor.flush())
        return Rendered(b"".join(parts), content_type, "gzip")
    return Rendered(body, content_type, None)
