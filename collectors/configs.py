"""Topic and broker settings that decide whether committed offsets stay safe (defaults included)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from collectors.errors import KafkaError, KafkaTimeoutError, KafkaUnavailableError
from collectors.model import ConfigsObservation, Failure, TopicConfig, TopicInfo
from collectors.seam import ConfigValue, SeamCollector, failure, topic_gone

log = logging.getLogger(__name__)
TRANSIENT = (KafkaUnavailableError, KafkaTimeoutError)  # a broker not reached: worth asking another
TOPIC_KEYS = (
    "retention.ms",
    "retention.bytes",
    "cleanup.policy",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "segment.ms",
)
BROKER_KEYS = (
    "offsets.retention.minutes",
    "offsets.topic.replication.factor",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "default.replication.factor",
    "log.retention.ms",
    "log.retention.minutes",
    "log.retention.hours",
    "log.retention.bytes",
)


class ConfigsCollector(SeamCollector):
    """Collects :class:`ConfigsObservation`: the :data:`TOPIC_KEYS` of every topic (batched
    DescribeConfigs) with the replication factor from metadata, and the :data:`BROKER_KEYS` of the first
    broker that answers. A topic whose configuration cannot be read is a ``topic`` failure.
    """

    name = "configs"

    async def collect(self) -> ConfigsObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
        topics = {t.name: t for t in meta.topics}
        failures: list[Failure] = []
        described, (broker, broker_failures) = await asyncio.gather(
            self._topic_configs(sorted(topics)), self._broker_configs([b.node_id for b in meta.brokers])
        )
        failures.extend(broker_failures)
        configs: list[TopicConfig] = []
        if isinstance(described, KafkaError):
            failures.extend(failure("topic", name, described) for name in sorted(topics))
            described = {}
        for name in sorted(topics):
            got = described.get(name)
            if isinstance(got, dict):
                try:
                    configs.append(topic_config(topics[name], got))
                except ValueError as exc:
                    err = KafkaError(f"unusable topic configuration: {exc}", cluster=self.cluster, topic=name)
                    failures.append(failure("topic", name, err))
            elif topic_gone(got):
                # deleted since the metadata this run started from: nothing unobservable (the next metadata
                # drops it). Counted as a failure, it kept the cluster "degraded" until the next run, 5 min
                # later by default, and a broker rolling restart meanwhile paged collector_failure (soak).
                log.debug("configs of %s/%s: the topic is gone", self.cluster, name)
            else:
                err = got or KafkaError("no configuration returned", cluster=self.cluster, topic=name)
                failures.append(failure("topic", name, err))
        broker_id, values = broker if broker is not None else (None, {})
        return ConfigsObservation(
            cluster=self.cluster,
            observed_at=observed_at,
            topics=tuple(configs),
            broker=tuple((k, v.value) for k, v in sorted(values.items()) if v.value is not None),
            failures=tuple(failures),
            broker_sources=tuple((k, v.source) for k, v in sorted(values.items()) if v.value is not None),
            broker_id=broker_id,
        )

    async def _topic_configs(
        self, names: list[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError] | KafkaError:
        """Asked once more, through whichever broker answers then, for topics whose broker could not be
        reached: this run's answer stands for 5 minutes (the default interval), so a broker restarting at
        that moment would leave the configs unknown, and the cluster degraded, until the next run."""
        first = await self._describe(names)
        if isinstance(first, KafkaError):
            return await self._describe(names) if isinstance(first, TRANSIENT) else first
        again = [n for n, got in first.items() if isinstance(got, TRANSIENT)]
        if not again:
            return first
        second = await self._describe(again)
        return first if isinstance(second, KafkaError) else {**first, **second}

    async def _describe(
        self, names: list[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError] | KafkaError:
        try:
            return await asyncio.to_thread(self._seam.describe_topic_configs, names, TOPIC_KEYS)
        except KafkaError as exc:
            return exc

    async def _broker_configs(
        self, brokers: list[int]
    ) -> tuple[tuple[int, dict[str, ConfigValue]] | None, list[Failure]]:
        """Broker settings are cluster-wide in practice: ask brokers in turn until one answers."""
        lost: list[Failure] = []
        for broker in brokers:
            try:
                values = await asyncio.to_thread(self._seam.describe_broker_configs, broker, BROKER_KEYS)
            except KafkaError as exc:
                lost.append(failure("broker", str(broker), exc))
                continue
            return (broker, values), []
        return None, lost


def topic_config(topic: TopicInfo, values: Mapping[str, ConfigValue]) -> TopicConfig:
    """A :class:`TopicConfig` from DescribeConfigs values; raises ``ValueError`` if a key is unusable."""

    def raw(key: str) -> str:
        entry = values.get(key)
        if entry is None or entry.value is None:
            raise ValueError(f"{key} missing")
        return entry.value

    def limit(key: str) -> int | None:
        number = int(raw(key))
        return None if number < 0 else number

    return TopicConfig(
        topic=topic.name,
        retention_ms=limit("retention.ms"),
        retention_bytes=limit("retention.bytes"),
        cleanup_policy=tuple(p.strip() for p in raw("cleanup.policy").split(",") if p.strip()),
        unclean_leader_election_enable=raw("unclean.leader.election.enable").lower() == "true",
        min_insync_replicas=int(raw("min.insync.replicas")),
        replication_factor=topic.replication_factor,
        segment_ms=limit("segment.ms") if "segment.ms" in values else None,
        sources=tuple(sorted((k, v.source) for k, v in values.items())),
    )
