"""BrokerMetricsCollector on a recorded sandbox scrape, garbage text and a dead URL."""

from __future__ import annotations

import asyncio
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from collectors.broker_metrics import (
    FAMILIES,
    FETCH_ERRORS,
    UNCLEAN_ELECTIONS,
    BrokerMetricsCollector,
    http_fetch,
    parse_metrics,
)
from collectors.errors import MetricsScrapeError

FIXTURES = Path(__file__).parent / "fixtures"
# A real scrape of a 1-node sandbox (deploy/sandbox/jmx-rules.yaml) after one offset commit and one
# fetch at an offset beyond the log end.
COMBINED = (FIXTURES / "sandbox_node1_combined.prom").read_text()
# The controller-only node (id 100) of a 3-broker sandbox right after one forced unclean election.
CONTROLLER = (FIXTURES / "sandbox_controller100.prom").read_text()
GOOD = "http://127.0.0.1:1/good"


def _family(sample_name: str) -> str:
    return sample_name.removesuffix("_total")


def _dead_url() -> str:
    with socket.socket() as sock:  # a port that was just free; nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/metrics"


async def test_collect_recorded_scrape_keeps_every_known_family_only() -> None:
    collector = BrokerMetricsCollector("c1", [GOOD], fetch=lambda url, timeout: COMBINED, clock=lambda: 42.0)

    observation = await collector.collect()

    assert (observation.cluster, observation.observed_at, observation.failures) == ("c1", 42.0, ())
    (broker,) = observation.brokers
    assert {_family(s.name) for s in broker.samples} == FAMILIES
    assert broker.broker_id == 1
    assert broker.value(UNCLEAN_ELECTIONS) == 0.0
    assert broker.value(FETCH_ERRORS, request="Fetch", error="OFFSET_OUT_OF_RANGE") == 1.0
    assert broker.value("kafka_server_group_coordinator_metrics_offset_commit_total") == 1.0
    assert broker.value("jvm_threads_current") is None


async def test_collect_controller_scrape_reads_node_id_and_unclean_count() -> None:
    texts = {GOOD: COMBINED, "http://127.0.0.1:1/controller": CONTROLLER}
    collector = BrokerMetricsCollector("c3", list(texts), fetch=lambda url, timeout: texts[url])

    observation = await collector.collect()

    assert [(b.url, b.broker_id) for b in observation.brokers] == [
        (GOOD, 1),
        ("http://127.0.0.1:1/controller", 100),
    ]
    assert observation.brokers[1].value(UNCLEAN_ELECTIONS) == 1.0
    assert observation.brokers[1].value("kafka_server_replicamanager_underreplicatedpartitions") is None


async def test_collect_garbage_text_becomes_failure_others_kept() -> None:
    bad = "http://127.0.0.1:2/bad"
    texts = {GOOD: COMBINED, bad: "<html>this is not prometheus text</html>\n"}
    collector = BrokerMetricsCollector("c1", [GOOD, bad], fetch=lambda url, timeout: texts[url])

    observation = await collector.collect()

    assert [b.url for b in observation.brokers] == [GOOD]
    assert [(f.scope, f.key, f.error) for f in observation.failures] == [("url", bad, "MetricsScrapeError")]


def _per_partition(name: str, partitions: int) -> str:
    """What the rules' Strimzi-dashboard gauges add to a scrape: one line per replica the node holds."""
    head = f"# HELP {name} Attribute exposed for management\n# TYPE {name} untyped\n"
    return head + "".join(
        f'{name}{{topic="t{i // 100}",partition="{i % 100}"}} 0.0\n' for i in range(partitions)
    )


def test_parse_metrics_families_offsetguard_does_not_read_skipped_unparsed() -> None:
    # a foreign family's malformed line would fail the whole scrape if it were parsed
    foreign = _per_partition("kafka_cluster_partition_atminisr", 5000) + 'jvm_info{version="21} 1\n'

    assert parse_metrics(GOOD, COMBINED + foreign) == parse_metrics(GOOD, COMBINED)


def test_parse_metrics_garbage_in_our_family_raises() -> None:
    broken = COMBINED + "kafka_log_logcleaner_deadthreadcount{ 1.0\n"

    with pytest.raises(MetricsScrapeError, match="unparsable"):
        parse_metrics(GOOD, broken)


async def test_collect_dead_url_becomes_failure_with_real_http() -> None:
    dead = _dead_url()

    def fetch(url: str, timeout: float) -> str:
        return COMBINED if url == GOOD else http_fetch(url, timeout)

    collector = BrokerMetricsCollector("c1", [dead, GOOD], fetch=fetch, timeout=1.0)

    observation = await collector.collect()

    assert [b.url for b in observation.brokers] == [GOOD]
    assert [f.key for f in observation.failures] == [dead]
    assert "Connection refused" in observation.failures[0].message


async def test_collect_text_without_our_families_becomes_failure() -> None:
    jvm_only = "# TYPE jvm_threads_current gauge\njvm_threads_current 12.0\n"
    texts = {GOOD: COMBINED, "http://other/": jvm_only}
    collector = BrokerMetricsCollector("c1", [GOOD, "http://other/"], fetch=lambda url, t: texts[url])

    observation = await collector.collect()

    assert [f.key for f in observation.failures] == ["http://other/"]


async def test_collect_unexpected_fetch_exception_is_translated_to_failure() -> None:
    def fetch(url: str, timeout: float) -> str:
        if url == GOOD:
            return COMBINED
        raise RuntimeError("boom")

    collector = BrokerMetricsCollector("c1", [GOOD, "http://x/"], fetch=fetch)

    observation = await collector.collect()

    assert [(f.key, f.error) for f in observation.failures] == [("http://x/", "MetricsScrapeError")]


async def test_collect_all_urls_failing_raises_metrics_scrape_error() -> None:
    dead = _dead_url()
    collector = BrokerMetricsCollector("c1", [dead, "http://127.0.0.1:2/x"], fetch=http_fetch, timeout=1.0)

    with pytest.raises(MetricsScrapeError) as caught:
        await collector.collect()

    assert caught.value.cluster == "c1"
    assert caught.value.url == dead


async def test_collect_scrapes_on_its_own_threads_not_the_default_executor() -> None:
    """A slow exporter must not hold the event loop's default executor, which the Kafka requests and the
    store's writes share: the scrapes run on the collector's threads, all URLs at once, until close()."""
    urls = [f"http://exporter-{i}/" for i in range(3)]
    started = threading.Barrier(len(urls), timeout=5)
    seen: set[str] = set()

    def fetch(url: str, timeout: float) -> str:
        seen.add(threading.current_thread().name)
        started.wait()  # every URL's scrape under way at once, or this breaks
        return COMBINED

    collector = BrokerMetricsCollector("c1", urls, fetch=fetch)
    default = _Counting(max_workers=1)
    asyncio.get_running_loop().set_default_executor(default)
    try:
        observation = await collector.collect()
        assert len(observation.brokers) == 3
        assert len(seen) == 3 and all(name.startswith("broker-metrics-c1") for name in seen)
        assert default.submitted == 0
    finally:
        collector.close()
        default.shutdown()
    assert collector._threads is None
    collector.close()  # twice: nothing to end


class _Counting(ThreadPoolExecutor):
    submitted = 0

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        return super().submit(*args, **kwargs)


def _lines_by_loop(text: str) -> list[str]:
    """The filter's meaning, a line at a time: the name a ``HELP``/``TYPE`` comment is about or a sample's
    name, ``_total`` dropped, is one of ours (other comments are not: the parser skips them)."""
    kept = []
    for line in text.splitlines():
        if line.startswith("#"):
            parts = line.split(None, 3)
            name = parts[2] if len(parts) > 2 and parts[1] in ("HELP", "TYPE") else ""
        else:
            name = line.split("{", 1)[0].split(None, 1)[0] if line.strip() else ""
        if name.removesuffix("_total") in FAMILIES:
            kept.append(line)
    return kept


EDGES = (
    "kafka_server_app_info_start_time_ms 5\n"  # first line, no comment before it
    "kafka_server_replicamanager_isrshrinks_rate 3\n"  # one of ours as a prefix of another's name
    "kafka_server_replicamanager_isrshrinkstotal 3\n"
    "xkafka_server_replicamanager_isrshrinks 3\n"
    "# HELP kafka_server_replicamanager_isrshrinks_total shrinks\n"
    "#\tTYPE  kafka_server_replicamanager_isrshrinks_total counter\n"
    "# some kafka_server_replicamanager_isrshrinks comment\n"
    'kafka_server_replicamanager_isrshrinks_total{broker="1"} 7.0 1700000000000\r\n'
    "  kafka_log_logcleaner_deadthreadcount\t0\n"
    "\n"
    "kafka_controller_kafkacontroller_offlinepartitionscount 0"  # the last line, no newline after it
)


@pytest.mark.parametrize("text", [COMBINED, CONTROLLER, COMBINED + _per_partition("kafka_x", 300), EDGES])
def test_our_lines_are_those_a_line_loop_keeps(text: str) -> None:
    from collectors.broker_metrics import _our_lines

    assert _our_lines(text).split("\n")[:-1] == _lines_by_loop(text)
