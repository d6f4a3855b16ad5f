"""Classic group metadata v0–v5 and the consumer embedded protocol inside its members."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.codec import (
    ConsumerAssignment,
    ConsumerSubscription,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    TopicPartitions,
    UnknownRecord,
    decode,
    decode_assignment,
    decode_subscription,
)
from collectors.errors import DecodeError

from . import encode as e

KEY = e.group_key(2, "billing")
SUBSCRIPTION = e.subscription(3, ["orders", "refunds"], b"ud", [("orders", [0, 1])], 4, "rack-a")
ASSIGNMENT = e.assignment(3, [("orders", [0, 1]), ("refunds", [2])], None)


def _group(**overrides: object) -> e.Group:
    group = e.Group(
        leader="m-1",
        current_state_timestamp=1_700_000_000_000,
        members=[
            e.Member("m-1", subscription=SUBSCRIPTION, assignment=ASSIGNMENT, group_instance_id="pod-1"),
            e.Member("m-2", client_id="c2", client_host="/10.0.0.2", subscription=SUBSCRIPTION),
        ],
    )
    for name, value in overrides.items():
        setattr(group, name, value)
    return group


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_decode_group_metadata_each_version_decodes_its_fields(version: int) -> None:
    record = decode(KEY, e.group_value(version, _group()))
    assert isinstance(record, GroupMetadata)
    assert (record.group, record.version, record.protocol_type) == ("billing", version, "consumer")
    assert (record.generation, record.protocol, record.leader) == (1, "range", "m-1")
    assert record.current_state_timestamp == (1_700_000_000_000 if version >= 2 else None)
    first, second = record.members
    assert (first.member_id, first.client_id, first.client_host) == ("m-1", "client", "/127.0.0.1")
    assert first.group_instance_id == ("pod-1" if version >= 3 else None)
    assert first.rebalance_timeout == (300000 if version >= 1 else None)
    assert first.session_timeout == 45000
    assert (first.subscription, first.assignment) == (SUBSCRIPTION, ASSIGNMENT)
    assert first.consumer_assignment == ConsumerAssignment(
        3, (TopicPartitions("orders", (0, 1)), TopicPartitions("refunds", (2,))), None
    )
    assert first.consumer_subscription is not None
    assert first.consumer_subscription.topics == ("orders", "refunds")
    assert (second.member_id, second.client_host, second.assignment) == ("m-2", "/10.0.0.2", b"")
    assert second.consumer_assignment is None
    assert second.assignment_error is None


def test_decode_group_metadata_null_protocol_and_leader_decode_as_none() -> None:
    record = decode(KEY, e.group_value(3, _group(protocol=None, leader=None, members=[], generation=0)))
    assert record == GroupMetadata("billing", 3, "consumer", 0, None, None, 1_700_000_000_000, ())


def test_decode_group_metadata_current_state_timestamp_minus_one_is_none() -> None:
    record = decode(KEY, e.group_value(3, _group(current_state_timestamp=-1)))
    assert record.current_state_timestamp is None  # type: ignore[union-attr]


def test_decode_group_metadata_non_consumer_protocol_keeps_bytes_undecoded() -> None:
    record = decode(KEY, e.group_value(3, _group(protocol_type="connect")))
    assert isinstance(record, GroupMetadata)
    member = record.members[0]
    assert member.assignment == ASSIGNMENT
    assert (member.consumer_assignment, member.consumer_subscription) == (None, None)


def test_decode_group_metadata_corrupt_assignment_keeps_record_and_raw_bytes() -> None:
    broken = ASSIGNMENT[:-3]
    group = _group(members=[e.Member("m-1", subscription=b"\xff\xff", assignment=broken)])
    record = decode(KEY, e.group_value(4, group))
    assert isinstance(record, GroupMetadata)
    member = record.members[0]
    assert member.assignment == broken
    assert member.consumer_assignment is None
    assert member.assignment_error is not None and member.assignment_error.startswith("assignment: truncated")
    assert member.consumer_subscription is None
    assert member.subscription_error == "subscription: negative consumer protocol version -1 at byte 0"


def test_decode_group_tombstone_names_the_group() -> None:
    assert decode(KEY, None) == GroupTombstone(2, "billing")


def test_decode_group_metadata_negative_version_is_unknown_record() -> None:
    value = e.i16(-1) + b"\x00\x00"
    assert decode(KEY, value) == UnknownRecord(2, -1, KEY, value)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_decode_truncated_group_metadata_at_every_cut_is_decode_error(version: int) -> None:
    value = e.group_value(version, _group())
    for cut in range(len(value)):
        with pytest.raises(DecodeError) as info:
            decode(KEY, value[:cut], offset=cut, partition=1)
        assert info.value.offset == cut


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_decode_subscription_each_version_decodes_its_fields(version: int) -> None:
    data = e.subscription(version, ["a"], b"u", [("a", [3])], 9, "r1")
    assert decode_subscription(data) == ConsumerSubscription(
        version,
        ("a",),
        b"u",
        (TopicPartitions("a", (3,)),) if version >= 1 else (),
        9 if version >= 2 else None,
        "r1" if version >= 3 else None,
    )


def test_decode_subscription_future_version_reads_as_v3() -> None:
    data = e.i16(7) + e.subscription(3, ["a"], None, [], 2, None)[2:] + b"future fields"
    assert decode_subscription(data) == ConsumerSubscription(7, ("a",), None, (), 2, None)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_decode_assignment_each_version_decodes(version: int) -> None:
    data = e.assignment(version, [("t", [0, 5])], b"\x01")
    assert decode_assignment(data) == ConsumerAssignment(version, (TopicPartitions("t", (0, 5)),), b"\x01")


_names = st.text(max_size=30)
_members = st.lists(
    st.builds(
        e.Member,
        member_id=_names,
        client_id=_names,
        client_host=_names,
        session_timeout=st.integers(min_value=0, max_value=2**31 - 1),
        subscription=st.binary(max_size=40),
        assignment=st.binary(max_size=40),
        group_instance_id=st.none() | _names,
    ),
    max_size=4,
)


@given(version=st.integers(min_value=0, max_value=5), members=_members, protocol=st.none() | _names)
def test_decode_encoded_group_metadata_round_trips(
    version: int, members: list[e.Member], protocol: str | None
) -> None:
    group = e.Group(protocol_type="other", protocol=protocol, leader=None, members=members)
    record = decode(KEY, e.group_value(version, group))
    assert isinstance(record, GroupMetadata)
    assert record.protocol == protocol
    assert record.members == tuple(
        MemberMetadata(
            m.member_id,
            m.group_instance_id if version >= 3 else None,
            m.client_id,
            m.client_host,
            m.rebalance_timeout if version >= 1 else None,
            m.session_timeout,
            m.subscription,
            m.assignment,
        )
        for m in members
    )
