"""The private attributes of kafka-python and aiokafka that :mod:`collectors.kafka.privates` reads exist on
the installed versions: an upgrade that moves one fails here, naming it, not in a collector at run time."""

import inspect
from types import SimpleNamespace

from aiokafka import AIOKafkaConsumer
from aiokafka.client import AIOKafkaClient
from kafka.admin import KafkaAdminClient
from kafka.net.manager import KafkaConnectionManager
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.broker_version_data import BrokerVersionData
from kafka.protocol.consumer import ListOffsetsResponse, OffsetFetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from collectors.kafka import privates
from collectors.kafka.fast_io import RawRequest


def test_privates_kafka_admin_client_still_sets_manager_in_init() -> None:
    assert "self._manager = " in inspect.getsource(KafkaAdminClient.__init__)
    assert callable(KafkaConnectionManager.run) and callable(KafkaConnectionManager.send)


def test_privates_kafka_admin_client_still_has_cluster_metadata_call() -> None:
    assert callable(KafkaAdminClient._get_cluster_metadata)


def test_privates_kafka_request_still_carries_version_bounds() -> None:
    assert {"_min_version", "_max_version"} <= set(ApiMessage.__slots__)
    request = MetadataRequest(topics=None, min_version=1)
    assert privates.request_version_bounds(request) == (1, None)


def test_privates_kafka_version_negotiation_still_reads_the_bounds_raw_requests_set() -> None:
    # RawRequest (collectors.kafka.fast_io) hands kafka-python these same attributes to negotiate with
    negotiate = inspect.getsource(BrokerVersionData.api_version)
    assert "operation._min_version" in negotiate and "operation._max_version" in negotiate
    raw = RawRequest.wrap(MetadataRequest(topics=None, min_version=1, max_version=9), MetadataResponse)
    assert (raw._min_version, raw._max_version) == (1, 9)


def test_privates_kafka_response_schemas_still_list_fields_in_wire_order() -> None:
    for response_class in (MetadataResponse, ListOffsetsResponse, OffsetFetchResponse):
        fields = privates.response_fields(response_class)
        first = next(iter(fields))
        assert first == "throttle_time_ms", response_class
        assert callable(fields[first].for_version_q)


def test_privates_aiokafka_consumer_still_keeps_its_client() -> None:
    assert "self._client = AIOKafkaClient(" in inspect.getsource(AIOKafkaConsumer.__init__)
    assert callable(AIOKafkaClient.send) and callable(AIOKafkaClient.fetch_all_metadata)


def test_privates_accessors_read_the_named_attributes() -> None:
    ran: list[tuple[object, list[object]]] = []
    manager = SimpleNamespace(run=lambda work, *args: ran.append((work, *args)) or "metadata")
    admin = SimpleNamespace(_manager=manager, _get_cluster_metadata="call")
    assert privates.admin_manager(admin) is manager
    assert privates.cluster_metadata(admin) == "metadata" and ran == [("call", [])]
    client = object()
    assert privates.consumer_client(SimpleNamespace(_client=client)) is client


def test_privates_import_kafka_inside_collectors_kafka_is_kafka_python() -> None:
    # the package is named collectors.kafka: absolute imports inside it still reach kafka-python
    from collectors.kafka import errors

    assert errors.kerr.__name__ == "kafka.errors"
    assert KafkaAdminClient.__module__.startswith("kafka.admin")
