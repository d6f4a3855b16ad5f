"""The real :class:`collectors.seam.KafkaSeam`, over kafka-python 3.0.

kafka-python 3.0's ``KafkaAdminClient`` runs all socket I/O on one background thread with its own
coroutine loop; ``manager.run(coro)`` is safe from many threads at once, and inside one coroutine several
requests (to one broker or many) can be in flight together: they are all sent before any is awaited.
The admin's high-level methods fail a whole call on one per-group error and do one request per group in
places, so this seam builds the protocol requests itself and sends them through the admin's connection
manager, which handles connections, SASL/TLS, API-version negotiation and timeouts.

Everything leaving this module is a :class:`collectors.errors.KafkaError` (see
:mod:`collectors.kafka.errors`).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from kafka.admin import KafkaAdminClient

from collectors.compat import Fallbacks
from collectors.errors import KafkaError
from collectors.kafka import group_requests as grq
from collectors.kafka import requests as rq
from collectors.kafka.errors import translate
from collectors.kafka.fast_cache import WireCache
from collectors.kafka.privates import admin_manager
from collectors.model import CommittedOffset, GroupInfo, TopicPartition
from collectors.seam import ConfigValue, EpochEndResult, ListedGroup, MetadataSnapshot, OffsetsResult
from collectors.settings import ClusterSettings

T = TypeVar("T")

# A stopped broker must come back within a cycle or two, not after kafka-python's default 30 s backoff.
_RECONNECT_BACKOFF_MAX_MS = 2_000
_CONFIG_CHUNK = 500  # topics per DescribeConfigs request
# kafka-python fails (not queues) a request once a connection has this many in flight; collectors put a
# handful per broker in flight at once (two ListOffsets, ListGroups, describes, OffsetFetch, configs).
_MAX_IN_FLIGHT = 100


def client_kwargs(settings: ClusterSettings, client_id: str = "offsetguard") -> dict[str, Any]:
    """``KafkaAdminClient`` keyword arguments for one cluster's settings (security included)."""
    kwargs: dict[str, Any] = {
        "bootstrap_servers": list(settings.bootstrap_servers),
        "client_id": client_id,
        "security_protocol": settings.security_protocol,
        "request_timeout_ms": settings.request_timeout_ms,
        "bootstrap_timeout_ms": settings.request_timeout_ms,
        "reconnect_backoff_max_ms": _RECONNECT_BACKOFF_MAX_MS,
        "max_in_flight_requests_per_connection": _MAX_IN_FLIGHT,
    }
    if settings.sasl is not None:
        kwargs["sasl_mechanism"] = settings.sasl.mechanism
        kwargs["sasl_plain_username"] = settings.sasl.username
        kwargs["sasl_plain_password"] = settings.sasl.password.get_secret_value()
    if settings.tls is not None:
        tls = settings.tls
        kwargs["ssl_check_hostname"] = tls.check_hostname
        for key, path in (
            ("ssl_cafile", tls.cafile),
            ("ssl_certfile", tls.certfile),
            ("ssl_keyfile", tls.keyfile),
        ):
            if path is not None:
                kwargs[key] = str(path)
    return kwargs


class KafkaPythonSeam:
    """:class:`collectors.seam.KafkaSeam` over one lazily created kafka-python ``KafkaAdminClient``.

    Nothing connects until the first call; a failed bootstrap is retried on the next call.
    """

    def __init__(
        self,
        settings: ClusterSettings,
        *,
        client_id: str = "offsetguard",
        admin_factory: Callable[..., Any] = KafkaAdminClient,
    ) -> None:
        self._settings = settings
        self._cluster = settings.name
        self.fallbacks = Fallbacks(settings.name)  # APIs this cluster's brokers lack: counted, logged once
        self._client_id = client_id
        self._admin_factory = admin_factory
        self._admin: Any = None
        self._lock = threading.Lock()
        self._closed = False
        self._wire = WireCache()  # requests and answers of the previous cycle, reused where unchanged

    # ---------------------------------------------------------------- plumbing

    def _manager(self) -> Any:
        with self._lock:
            if self._closed:
                raise KafkaError("the Kafka seam is closed", cluster=self._cluster)
            if self._admin is None:
                try:
                    self._admin = self._admin_factory(**client_kwargs(self._settings, self._client_id))
                except Exception as exc:
                    raise translate(exc, cluster=self._cluster, what="bootstrap") from exc
            return admin_manager(self._admin)

    def _run(self, work: Callable[[Any], Awaitable[T]], what: str, **where: Any) -> T:
        manager = self._manager()
        try:
            result: T = manager.run(work, manager)
        except Exception as exc:
            raise translate(exc, cluster=self._cluster, what=what, **where) from exc
        return result

    # ---------------------------------------------------------------- KafkaSeam

    def metadata(self) -> MetadataSnapshot:
        """See :meth:`collectors.seam.KafkaSeam.metadata`."""
        return self._run(lambda m: rq.metadata(m, self._cluster, self._wire), "Metadata")

    def topic_errors(self, names: Sequence[str]) -> dict[str, KafkaError | None]:
        """See :meth:`collectors.seam.KafkaSeam.topic_errors`."""
        if not names:
            return {}
        return self._run(lambda m: rq.topic_errors(m, self._cluster, names), "Metadata of named topics")

    def list_offsets(self, leader_id: int, partitions: Sequence[TopicPartition]) -> OffsetsResult:
        """See :meth:`collectors.seam.KafkaSeam.list_offsets`."""
        timeout = self._settings.request_timeout_ms
        return self._run(
            lambda m: rq.list_offsets(m, self._cluster, leader_id, partitions, timeout, self._wire),
            f"ListOffsets to {leader_id}",
        )

    def offsets_for_leader_epoch(
        self, leader_id: int, requests: Sequence[tuple[TopicPartition, int]]
    ) -> EpochEndResult:
        """See :meth:`collectors.seam.KafkaSeam.offsets_for_leader_epoch`."""
        if not requests:
            return {}
        return self._run(
            lambda m: rq.offsets_for_leader_epoch(m, self._cluster, leader_id, requests),
            f"OffsetForLeaderEpoch to {leader_id}",
        )

    def list_groups(self, broker_id: int) -> list[ListedGroup]:
        """See :meth:`collectors.seam.KafkaSeam.list_groups`."""
        return self._run(
            lambda m: grq.list_groups(m, self._cluster, broker_id, self.fallbacks),
            f"ListGroups to {broker_id}",
        )

    def find_coordinators(self, group_ids: Sequence[str]) -> dict[str, int | KafkaError]:
        """See :meth:`collectors.seam.KafkaSeam.find_coordinators`."""
        if not group_ids:
            return {}
        return self._run(lambda m: grq.find_coordinators(m, self._cluster, group_ids), "FindCoordinator")

    def describe_classic_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        """See :meth:`collectors.seam.KafkaSeam.describe_classic_groups`."""
        if not group_ids:
            return {}
        return self._run(
            lambda m: grq.describe_classic(m, self._cluster, broker_id, group_ids),
            f"DescribeGroups to {broker_id}",
        )

    def describe_consumer_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        """See :meth:`collectors.seam.KafkaSeam.describe_consumer_groups`."""
        if not group_ids:
            return {}
        return self._run(
            lambda m: grq.describe_consumer(m, self._cluster, broker_id, group_ids),
            f"ConsumerGroupDescribe to {broker_id}",
        )

    def fetch_offsets(
        self, coordinator_id: int, group_ids: Sequence[str]
    ) -> dict[str, list[CommittedOffset] | KafkaError]:
        """See :meth:`collectors.seam.KafkaSeam.fetch_offsets`."""
        if not group_ids:
            return {}
        group = group_ids[0] if len(group_ids) == 1 else None
        return self._run(
            lambda m: grq.fetch_offsets(m, self._cluster, coordinator_id, group_ids, self._wire),
            f"OffsetFetch to {coordinator_id}",
            group=group,
        )

    def describe_topic_configs(
        self, topics: Sequence[str], keys: Sequence[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError]:
        """See :meth:`collectors.seam.KafkaSeam.describe_topic_configs`."""
        if not topics:
            return {}
        chunks = [topics[i : i + _CONFIG_CHUNK] for i in range(0, len(topics), _CONFIG_CHUNK)]
        return self._run(
            lambda m: rq.describe_topic_configs(m, self._cluster, chunks, keys), "DescribeConfigs"
        )

    def describe_broker_configs(self, broker_id: int, keys: Sequence[str]) -> dict[str, ConfigValue]:
        """See :meth:`collectors.seam.KafkaSeam.describe_broker_configs`."""
        return self._run(
            lambda m: rq.describe_broker_configs(m, self._cluster, broker_id, keys),
            f"DescribeConfigs to {broker_id}",
        )

    def close(self) -> None:
        """Close the admin client (its I/O thread and connections); idempotent."""
        with self._lock:
            admin, self._admin, self._closed = self._admin, None, True
        if admin is not None:
            try:
                admin.close()
            except Exception as exc:
                raise translate(exc, cluster=self._cluster, what="close") from exc
