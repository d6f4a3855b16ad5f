"""Plain admin calls by bootstrap address, for the sandbox Kafka: is it ready, which cluster is it, its ACLs.

The sandbox (``sandbox/readiness.py``, ``sandbox/security.py``) reaches Kafka only through these, so it
needs no Kafka client of its own. Each call opens a kafka-python ``KafkaAdminClient``, asks, and closes it.
A Kafka failure leaves as a :class:`collectors.errors.KafkaError`, except where a function says it answers
instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePattern,
    ResourceType,
)

from collectors import acls
from collectors.errors import KafkaError
from collectors.kafka.privates import cluster_metadata

log = logging.getLogger(__name__)
CLIENT_ID = "offsetguard-sandbox"


def registered_brokers(bootstrap_servers: str) -> set[int]:
    """Ids of the unfenced brokers describe-cluster lists right now (empty if the cluster cannot be asked)."""
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap_servers, request_timeout_ms=5000, client_id=CLIENT_ID
        )
    except Exception as exc:  # kafka-python raises many unrelated types while brokers start
        log.debug("describe-cluster not possible yet: %s", exc)
        return set()
    try:
        try:
            described = admin.describe_cluster()
        except KeyError:
            # kafka-python 3.0 fails on a DescribeCluster v0 answer (Kafka < 3.4 has no endpoint_type); the
            # brokers a Metadata request lists are the registered ones there (ZooKeeper mode has no fencing)
            metadata = cluster_metadata(admin)
            return {int(b["node_id"]) for b in metadata.get("brokers", [])}
        # kafka-python asks with include_fenced_brokers: a stopped broker stays listed, fenced
        return {int(b["broker_id"]) for b in described.get("brokers", []) if not b.get("is_fenced")}
    except Exception as exc:
        log.debug("describe-cluster failed: %s", exc)
        return set()
    finally:
        admin.close()


def cluster_id(bootstrap_servers: str) -> str | None:
    """The cluster id the brokers report (a ZooKeeper-mode cluster makes its own at first start)."""
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=10_000)
        try:
            found = cluster_metadata(admin)
        finally:
            admin.close()
    except Exception as exc:
        raise KafkaError(f"cluster id of {bootstrap_servers}: {exc!r}") from exc
    return str(found["cluster_id"]) if found.get("cluster_id") else None


def wait_group_coordinator(bootstrap_servers: str, deadline: float) -> None:
    """Ask for a group coordinator until one answers (the first ask creates ``__consumer_offsets``);
    past ``deadline`` (``time.monotonic()``), raise :class:`KafkaError` with the last refusal."""
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap_servers, request_timeout_ms=10_000, client_id=CLIENT_ID
        )
    except Exception as exc:
        raise KafkaError(f"no group coordinator answered: {exc}") from exc
    try:
        while True:
            try:
                admin.describe_groups(["offsetguard-sandbox-probe"])
                return
            except Exception as exc:  # COORDINATOR_NOT_AVAILABLE while the topic is being created
                if time.monotonic() > deadline:
                    raise KafkaError(f"no group coordinator answered: {exc}") from exc
                log.debug("group coordinator not ready: %s", exc)
                time.sleep(0.3)
    finally:
        admin.close()


def acl_bindings(principal: str, grants: Iterable[acls.Grant]) -> list[ACL]:
    """kafka-python ALLOW bindings (LITERAL, any host) of ``grants`` for ``User:<principal>``."""
    return [
        ACL(
            f"User:{principal}",
            "*",
            ACLOperation[g.operation],
            ACLPermissionType.ALLOW,
            ResourcePattern(ResourceType[g.resource], g.name, ACLResourcePatternType.LITERAL),
        )
        for g in grants
    ]


def create_acls(
    bootstrap_servers: str, principal: str, grants: Iterable[acls.Grant], timeout: float
) -> list[Any]:
    """Create ``grants`` for ``principal`` (as whoever the address lets in); the bindings Kafka refused."""
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=int(timeout * 1000))
        try:
            result = admin.create_acls(acl_bindings(principal, grants))
        finally:
            admin.close()
    except Exception as exc:
        raise KafkaError(f"create ACLs of User:{principal}: {exc!r}") from exc
    return list(result["failed"])
