"""Rendering: format negotiation by prometheus_client and gzip when accepted."""

from __future__ import annotations

import gzip
import zlib

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS
from prometheus_client.registry import CollectorRegistry

from service.metrics import ScrapeInputs, build_registry, render
from service.metrics.exposition import accepts_gzip
from tests.service.metrics import builders as b

LINE = b'kafka_consumergroup_lag{cluster="c1",consumergroup="billing",partition="1",topic="orders"} -5.0'


def _registry(calls: list[int] | None = None) -> CollectorRegistry:
    def source() -> ScrapeInputs:
        if calls is not None:
            calls.append(1)
        return ScrapeInputs(clusters=[b.cluster_inputs()])

    return build_registry(source, clock=lambda: b.NOW)


def test_render_plain_client_text_format_with_negative_lag() -> None:
    out = render(_registry())
    assert out.content_type == CONTENT_TYPE_PLAIN_0_0_4
    assert out.content_encoding is None
    assert LINE in out.body.splitlines()


def test_render_openmetrics_accept_openmetrics_body() -> None:
    out = render(_registry(), accept="application/openmetrics-text; version=1.0.0")
    assert out.content_type.startswith("application/openmetrics-text")
    assert out.body.endswith(b"# EOF\n")
    assert OPENMETRICS.startswith("application/openmetrics-text")


def test_render_gzip_accepted_compressed_same_text() -> None:
    registry = _registry()
    plain = render(registry)
    zipped = render(registry, accept_encoding="gzip, deflate")
    assert zipped.content_encoding == "gzip"
    assert gzip.decompress(zipped.body) == plain.body


def test_render_gzip_of_a_fleet_is_one_standard_stream_of_the_same_text() -> None:
    # 2,000 partitions and 5,000 group-partitions: many chunks through the compressor
    from bench.metrics_families import fleet

    inputs = ScrapeInputs(clusters=[fleet(20, 200, 25, b.NOW)])
    registry = build_registry(lambda: inputs, clock=lambda: b.NOW)
    plain = render(registry)
    zipped = render(registry, accept_encoding="gzip")
    assert len(plain.body) > 1_000_000
    assert gzip.decompress(zipped.body) == plain.body  # the trailer's CRC and length checked
    inflate = zlib.decompressobj(31)
    assert inflate.decompress(zipped.body) == plain.body and inflate.eof and not inflate.unused_data
    assert len(zipped.body) < len(plain.body) / 10


def test_render_pinned_inputs_source_not_called() -> None:
    calls: list[int] = []
    out = render(_registry(calls), ScrapeInputs())
    assert calls == []
    assert b"kafka_brokers{" not in out.body


def test_accepts_gzip_quality_zero_refused() -> None:
    assert accepts_gzip("gzip;q=0.5")
    assert not accepts_gzip("gzip;q=0")
    assert not accepts_gzip("identity")
    assert not accepts_gzip(None)
