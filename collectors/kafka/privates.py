"""Every private attribute of kafka-python and aiokafka that offsetguard touches, in one place.

Their public APIs do not expose what the seam needs (the admin client's connection manager, the cluster
metadata call, a request's version bounds, a response schema's field order, the consumer's client), so
these few reads go behind named functions here and nowhere else. ``tests/collectors/kafka/test_privates.py``
asserts that each attribute exists on the installed kafka-python and aiokafka, so an upgrade that moves
one fails there, by name, rather than deep inside a collector at run time.
"""

from __future__ import annotations

from typing import Any


def admin_manager(admin: Any) -> Any:
    """The connection manager of a kafka-python ``KafkaAdminClient`` (``manager.run(coro)``, ``send``)."""
    return admin._manager


def cluster_metadata(admin: Any) -> Any:
    """A MetadataResponse for the whole cluster, through a kafka-python ``KafkaAdminClient``; blocking."""
    return admin._manager.run(admin._get_cluster_metadata, [])


def request_version_bounds(request: Any) -> tuple[int | None, int | None]:
    """The ``min_version``/``max_version`` a kafka-python request was built with (None: unbounded)."""
    return request._min_version, request._max_version


def response_fields(response_class: Any) -> Any:
    """The top-level fields, in wire order, of a kafka-python response class's schema (name -> field)."""
    return response_class._struct.fields


def consumer_client(consumer: Any) -> Any:
    """The ``AIOKafkaClient`` of an aiokafka ``AIOKafkaConsumer`` (its cluster metadata, ``send``)."""
    return consumer._client
