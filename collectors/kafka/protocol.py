"""Protocol pieces kafka-python 3.0 lacks, and decoders from its response objects to our model.

* ``ConsumerGroupDescribeRequest/Response`` (API key 69, KIP-848): kafka-python's JSON-schema
  ``ApiMessage`` machinery fed with Kafka 4.1.2's own schema files (``collectors/kafka/schemas``).
  Defining the response class registers it, so kafka-python's connection decodes it like any other.
* Pure helpers turning response objects into :mod:`collectors.model` values; no I/O here.
"""

from __future__ import annotations

import logging
import struct
from typing import Any

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from collectors.model import GroupInfo, GroupMember, TopicPartition

log = logging.getLogger(__name__)

_SCHEMAS = "collectors.kafka.schemas"


class ConsumerGroupDescribeRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg]
    """KIP-848 ConsumerGroupDescribe request (v0-1, flexible)."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg]
    """KIP-848 ConsumerGroupDescribe response (v0-1, flexible)."""


# DescribeConfigs ConfigSource codes, named as Kafka's Java admin client names them.
CONFIG_SOURCES = {
    -1: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}


def group_type(raw: str) -> str:
    """ListGroups v5 group type, lower-cased; brokers before KIP-848 only have classic groups."""
    return raw.lower() if raw else "classic"


def decode_assignment(raw: bytes | None) -> tuple[TopicPartition, ...]:
    """Topic-partitions in a classic ConsumerProtocol assignment (``()`` when empty or not decodable)."""
    if not raw:
        return ()
    try:
        decoded = ConsumerProtocolAssignment.decode(bytes(raw))
        return tuple(TopicPartition(tp.topic, tp.partition) for tp in decoded.partitions())
    except (struct.error, ValueError, IndexError, UnicodeDecodeError, TypeError) as exc:
        # A non-Java client may use its own assignment format; the group is still reported.
        log.debug("undecodable consumer assignment (%d bytes): %s", len(raw), exc)
        return ()


def classic_group(described: Any, coordinator: int) -> GroupInfo:
    """A DescribeGroups ``DescribedGroup`` as :class:`GroupInfo` (error_code already checked)."""
    decode = described.protocol_type == "consumer"
    members = tuple(
        GroupMember(
            member_id=m.member_id,
            client_id=m.client_id,
            host=m.client_host,
            instance_id=m.group_instance_id,
            assignment=decode_assignment(m.member_assignment) if decode else (),
        )
        for m in described.members
    )
    return GroupInfo(
        group_id=described.group_id,
        group_type="classic",
        state=described.group_state,
        protocol_type=described.protocol_type,
        protocol=described.protocol_data,
        members=members,
        coordinator=coordinator,
    )


def consumer_group(described: Any, coordinator: int) -> GroupInfo:
    """A ConsumerGroupDescribe ``DescribedGroup`` as :class:`GroupInfo` (error_code already checked)."""
    members = tuple(
        GroupMember(
            member_id=m.member_id,
            client_id=m.client_id,
            host=m.client_host,
            instance_id=m.instance_id,
            assignment=tuple(
                TopicPartition(tps.topic_name, p)
                for tps in m.assignment.topic_partitions
                for p in tps.partitions
            ),
            member_epoch=m.member_epoch,
        )
        for m in described.members
    )
    return GroupInfo(
        group_id=described.group_id,
        group_type="consumer",
        state=described.group_state,
        protocol_type="consumer",
        protocol=described.assignor_name,
        members=members,
        coordinator=coordinator,
        group_epoch=described.group_epoch,
    )
