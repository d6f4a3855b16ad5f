"""Broker metrics: scrape each node's Prometheus JMX exporter endpoint and keep the offset-safety families.

The endpoints run ``deploy/sandbox/jmx-rules.yaml`` (or the same rules in production); :data:`FAMILIES`
names every family those rules expose, as ``prometheus_client``'s parser names them (a counter's family
drops ``_total``; its samples keep it, so look samples up by the name printed in the text, e.g.
:data:`UNCLEAN_ELECTIONS`). The node behind a URL is read from the ``node_id`` label of
``kafka_server_app_info_start_time_ms`` that the rules add; it is ``None`` if the scrape lacks it.

One URL failing (unreachable, HTTP error, unparsable, none of our families) is a ``Failure`` in the
observation; only when every URL fails does :meth:`BrokerMetricsCollector.collect` raise
:class:`~collectors.errors.MetricsScrapeError`.

The scrapes run on the collector's own threads, one per URL, not on the event loop's default executor:
an exporter listing a broker's every partition takes seconds to answer (1-4 s at 20,000 partitions on
three brokers), and four of them held four of that executor's six threads (2 cores) that the Kafka
requests and the store's writes share. (What delayed the first complete picture at start was the
exporters' CPU on the brokers, not these threads: see ``CollectorJob.after`` in the wiring.)
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from prometheus_client.parser import text_string_to_metric_families

from collectors.errors import MetricsScrapeError
from collectors.model import BrokerMetrics, Failure, MetricSample, MetricsObservation

log = logging.getLogger(__name__)

Fetch = Callable[[str, float], str]

UNCLEAN_ELECTIONS = "kafka_controller_controllerstats_uncleanleaderelections_total"
ELR_ELECTIONS = "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total"
OFFLINE_PARTITIONS = "kafka_controller_kafkacontroller_offlinepartitionscount"
FETCH_ERRORS = "kafka_network_requestmetrics_errors_total"  # labels: request="Fetch", error
NODE_INFO = "kafka_server_app_info_start_time_ms"  # label: node_id

FAMILIES: frozenset[str] = frozenset(
    {
        "kafka_controller_controllerstats_uncleanleaderelections",
        "kafka_controller_controllerstats_electionfromeligibleleaderreplicas",
        "kafka_controller_kafkacontroller_offlinepartitionscount",
        "kafka_controller_kafkacontroller_activecontrollercount",
        "kafka_server_replicamanager_underreplicatedpartitions",
        "kafka_server_replicamanager_underminisrpartitioncount",
        "kafka_server_replicamanager_isrshrinks",
        "kafka_server_replicamanager_isrexpands",
        "kafka_log_logcleanermanager_time_since_last_run_ms",
        "kafka_log_logcleanermanager_max_dirty_percent",
        "kafka_log_logcleanermanager_uncleanable_partitions_count",
        "kafka_log_logcleaner_max_clean_time_secs",
        "kafka_log_logcleaner_deadthreadcount",
        "kafka_coordinator_group_groupmetadatamanager_numoffsets",
        "kafka_coordinator_group_groupmetadatamanager_numgroups",
        "kafka_server_group_coordinator_metrics_offset_commit",
        "kafka_server_group_coordinator_metrics_offset_expiration",
        "kafka_server_group_coordinator_metrics_offset_deletion",
        "kafka_network_requestmetrics_errors",
        "kafka_server_app_info_start_time_ms",
    }
)


def http_fetch(url: str, timeout: float) -> str:
    """GET ``url`` and return its body as text (blocking; the collector calls it in a worker thread)."""
    request = urllib.request.Request(url, headers={"Accept": "text/plain;version=0.0.4"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
    return body.decode("utf-8")


def _trie(names: Sequence[str]) -> str:
    """A pattern matching exactly ``names``, their common beginnings factored out (``a(?:b|c)``): a line
    that is none of them fails at its first differing character, not once for each name."""
    if names == [""]:
        return ""
    by_first: dict[str, list[str]] = {}
    for name in names:
        by_first.setdefault(name[:1], []).append(name[1:])
    alternatives = [re.escape(c) + _trie(rest) if c else "" for c, rest in sorted(by_first.items())]
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


# A line of :data:`FAMILIES`: a sample (its name, ``_total`` for a counter's, then labels or its value) or
# its ``# HELP``/``# TYPE`` comment. Found after a newline, so the search goes from line start to line
# start in C.
_OUR_LINE = re.compile(
    r"\n([ \t]*(?:#[ \t]+(?:HELP|TYPE)[ \t]+)?"
    + _trie(sorted(FAMILIES))
    + r"(?:_total)?(?=[ \t{\r\n]|$)[^\r\n]*)"
)


def _our_lines(text: str) -> str:
    """The lines of :data:`FAMILIES` (samples and their comments) only. The same endpoint serves families
    offsetguard never reads, the per-partition ones for Strimzi's dashboard among them (two series per
    replica: 10,000 lines for 5,000 replicas), and parsing them costs some 30 times this filter; the
    filter itself, a pattern over the whole text, a fifth of a loop over its lines."""
    kept = _OUR_LINE.findall("\n" + text)
    kept.append("")
    return "\n".join(kept)


def parse_metrics(url: str, text: str) -> BrokerMetrics:
    """Keep the samples of :data:`FAMILIES` from a Prometheus text exposition; raise if there are none."""
    samples: list[MetricSample] = []
    try:
        for family in text_string_to_metric_families(_our_lines(text)):
            if family.name not in FAMILIES:
                continue
            for sample in family.samples:
                labels = tuple(sorted(sample.labels.items()))
                samples.append(MetricSample(sample.name, labels, float(sample.value)))
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise MetricsScrapeError(f"unparsable metrics text: {exc}", url=url) from exc
    if not samples:
        raise MetricsScrapeError("no offsetguard metric families (are our JMX rules deployed?)", url=url)
    node_ids = {dict(s.labels).get("node_id", "") for s in samples if s.name == NODE_INFO}
    node_ids.discard("")
    broker_id = int(node_ids.pop()) if len(node_ids) == 1 else None
    return BrokerMetrics(url=url, broker_id=broker_id, samples=tuple(samples))


MAX_THREADS = 8  # scrapes at once, at most: more URLs wait for a thread of this collector's own


class BrokerMetricsCollector:
    """Scrapes every metrics URL of one cluster concurrently into a :class:`MetricsObservation`, on
    threads of its own (:meth:`close` ends them)."""

    name = "broker_metrics"

    def __init__(
        self,
        cluster: str,
        urls: Sequence[str],
        fetch: Fetch | None = None,
        clock: Callable[[], float] = time.time,
        timeout: float = 5.0,
    ) -> None:
        self.cluster = cluster
        self.urls = tuple(urls)
        self._fetch = fetch or http_fetch
        self._clock = clock
        self._timeout = timeout
        self._threads: ThreadPoolExecutor | None = None

    async def collect(self) -> MetricsObservation:
        observed_at = self._clock()
        if self._threads is None:
            self._threads = ThreadPoolExecutor(
                max_workers=max(1, min(len(self.urls), MAX_THREADS)),
                thread_name_prefix=f"broker-metrics-{self.cluster}",
            )
        loop = asyncio.get_running_loop()
        results = await asyncio.gather(
            *(loop.run_in_executor(self._threads, self._scrape, url) for url in self.urls)
        )
        brokers = tuple(r for r in results if isinstance(r, BrokerMetrics))
        failures = tuple(r for r in results if isinstance(r, Failure))
        if self.urls and not brokers:
            raise MetricsScrapeError(
                f"all {len(self.urls)} metrics URLs failed: {failures[0].message}",
                url=self.urls[0],
                cluster=self.cluster,
            )
        return MetricsObservation(
            cluster=self.cluster, observed_at=observed_at, brokers=brokers, failures=failures
        )

    def close(self) -> None:
        """End the scraping threads (a scrape under way finishes within its timeout)."""
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None

    def _scrape(self, url: str) -> BrokerMetrics | Failure:
        try:
            try:
                text = self._fetch(url, self._timeout)
            except Exception as exc:  # urllib/socket/http.client errors, or whatever an injected fetch raises
                raise MetricsScrapeError(f"cannot scrape {url}: {exc}", url=url) from exc
            return parse_metrics(url, text)
        except MetricsScrapeError as exc:
            log.warning("cluster %s: %s", self.cluster, exc.message)
            return Failure(scope="url", key=url, error=type(exc).__name__, message=exc.message)
