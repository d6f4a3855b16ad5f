"""KIP-848 consumer-group records (types 3–8 and 16): values, tombstones, unknown versions."""

from __future__ import annotations

import pytest

from collectors.codec import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    GroupTombstone,
    PartitionRacks,
    TopicIdPartitions,
    TopicMetadata,
    UnknownRecord,
    decode,
)
from collectors.errors import DecodeError

from . import encode as e

TID_A = bytes(range(16))
TID_A_TEXT = "AAECAwQFBgcICQoLDA0ODw"
TID_B = bytes(range(16, 32))
TID_B_TEXT = "EBESExQVFhcYGRobHB0eHw"


def _member_value(classic: tuple[int, list[tuple[str, bytes]]] | None = None) -> bytes:
    return e.cg_member_metadata_value(
        instance_id="pod-1",
        rack_id=None,
        client_id="consumer-1",
        client_host="/10.0.0.1",
        topics=["orders", "refunds"],
        regex=None,
        rebalance_timeout_ms=300000,
        server_assignor="uniform",
        classic=classic,
    )


# (key, value, expected record) for every KIP-848 type.
CASES = [
    (e.group_key(3, "g"), e.cg_metadata_value(12), ConsumerGroupMetadata("g", 0, 12, 0)),
    (e.group_key(3, "g"), e.cg_metadata_value(12, metadata_hash=-5), ConsumerGroupMetadata("g", 0, 12, -5)),
    (
        e.group_key(4, "g"),
        e.cg_partition_metadata_value(
            [(TID_A, "orders", 3, [(0, ["r1", "r2"]), (1, [])]), (TID_B, "x", 1, [])]
        ),
        ConsumerGroupPartitionMetadata(
            "g",
            0,
            (
                TopicMetadata(
                    TID_A_TEXT, "orders", 3, (PartitionRacks(0, ("r1", "r2")), PartitionRacks(1, ()))
                ),
                TopicMetadata(TID_B_TEXT, "x", 1, ()),
            ),
        ),
    ),
    (
        e.group_key(5, "g", "member-1"),
        _member_value(),
        ConsumerGroupMemberMetadata(
            "g",
            "member-1",
            0,
            "pod-1",
            None,
            "consumer-1",
            "/10.0.0.1",
            ("orders", "refunds"),
            None,
            300000,
            "uniform",
            None,
        ),
    ),
    (
        e.group_key(5, "g", "member-1"),
        _member_value(classic=(45000, [("range", b"\x00\x01"), ("cooperative-sticky", b"")])),
        ConsumerGroupMemberMetadata(
            "g",
            "member-1",
            0,
            "pod-1",
            None,
            "consumer-1",
            "/10.0.0.1",
            ("orders", "refunds"),
            None,
            300000,
            "uniform",
            ClassicMemberMetadata(
                45000, (ClassicProtocol("range", b"\x00\x01"), ClassicProtocol("cooperative-sticky", b""))
            ),
        ),
    ),
    (
        e.group_key(6, "g"),
        e.cg_target_assignment_metadata_value(8),
        ConsumerGroupTargetAssignmentMetadata("g", 0, 8),
    ),
    (
        e.group_key(7, "g", "member-1"),
        e.cg_target_assignment_member_value([(TID_A, [0, 2]), (TID_B, [1])]),
        ConsumerGroupTargetAssignmentMember(
            "g", "member-1", 0, (TopicIdPartitions(TID_A_TEXT, (0, 2)), TopicIdPartitions(TID_B_TEXT, (1,)))
        ),
    ),
    (
        e.group_key(8, "g", "member-1"),
        e.cg_current_member_assignment_value(9, 8, 1, [(TID_A, [0])], [(TID_B, [4, 5])]),
        ConsumerGroupCurrentMemberAssignment(
            "g",
            "member-1",
            0,
            9,
            8,
            1,
            (TopicIdPartitions(TID_A_TEXT, (0,)),),
            (TopicIdPartitions(TID_B_TEXT, (4, 5)),),
        ),
    ),
    (
        e.group_key(16, "g", "orders\\..*"),
        e.cg_regex_value(["orders.eu", "orders.us"], 77, 1_700_000_000_000),
        ConsumerGroupRegularExpression(
            "g", "orders\\..*", 0, ("orders.eu", "orders.us"), 77, 1_700_000_000_000
        ),
    ),
]


@pytest.mark.parametrize(("key", "value", "expected"), CASES)
def test_decode_consumer_group_record_decodes_its_fields(key: bytes, value: bytes, expected: object) -> None:
    assert decode(key, value) == expected


@pytest.mark.parametrize(("key", "value", "expected"), CASES)
def test_decode_consumer_group_truncated_at_every_cut_is_decode_error(
    key: bytes, value: bytes, expected: object
) -> None:
    for cut in range(len(key)):
        with pytest.raises(DecodeError):
            decode(key[:cut], value, offset=1)
    for cut in range(len(value)):
        with pytest.raises(DecodeError) as info:
            decode(key, value[:cut], offset=2, partition=0)
        assert info.value.offset == 2


def test_decode_consumer_group_unknown_tags_are_skipped() -> None:
    value = e.i16(0) + e.i32(3) + e.tags({0: e.i64(99), 5: b"new"})
    assert decode(e.group_key(3, "g"), value) == ConsumerGroupMetadata("g", 0, 3, 99)


def test_decode_consumer_group_metadata_hash_of_wrong_size_is_decode_error() -> None:
    value = e.i16(0) + e.i32(3) + e.tags({0: b"\x01"})
    with pytest.raises(DecodeError, match="MetadataHash tag of 1 bytes"):
        decode(e.group_key(3, "g"), value)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (e.group_key(3, "g"), GroupTombstone(3, "g")),
        (e.group_key(4, "g"), GroupTombstone(4, "g")),
        (e.group_key(5, "g", "m"), GroupTombstone(5, "g", member_id="m")),
        (e.group_key(6, "g"), GroupTombstone(6, "g")),
        (e.group_key(7, "g", "m"), GroupTombstone(7, "g", member_id="m")),
        (e.group_key(8, "g", "m"), GroupTombstone(8, "g", member_id="m")),
        (e.group_key(16, "g", "re.*"), GroupTombstone(16, "g", regular_expression="re.*")),
    ],
)
def test_decode_consumer_group_null_value_is_tombstone_of_its_key(
    key: bytes, expected: GroupTombstone
) -> None:
    assert decode(key, None) == expected


@pytest.mark.parametrize("record_type", [3, 4, 5, 6, 7, 8, 16])
def test_decode_consumer_group_unknown_version_is_unknown_record(record_type: int) -> None:
    key = e.group_key(record_type, "g", "m" if record_type in (5, 7, 8, 16) else None)
    value = e.i16(1) + b"\x00" * 8
    assert decode(key, value) == UnknownRecord(record_type, 1, key, value)
