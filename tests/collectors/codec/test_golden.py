"""Golden vectors serialized by Kafka 4.1.2's own generated classes (kafka-group-coordinator jar).

Produced once with a throwaway Java program calling ``MessageUtil.toCoordinatorTypePrefixedBytes`` /
``toVersionPrefixedBytes`` on the generated *Key/*Value classes, so these check the decoder against the
real broker encoding rather than against our own test encoder.
"""

from __future__ import annotations

from collectors.codec import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    GroupMetadata,
    GroupTombstone,
    OffsetCommit,
    TopicIdPartitions,
    TopicPartitions,
    decode,
)

OFFSET_KEY = bytes.fromhex("0001000762696c6c696e6700066f726465727300000007")
OFFSET_V4 = bytes.fromhex(
    "000400000000000004d200000005c901" + "78" * 200 + "0000018bcfe56800010010806930d2a8f94d14beeed531ec0edb7c"
)
OFFSET_V3 = bytes.fromhex("000300000000000004d20000000500c8" + "78" * 200 + "0000018bcfe56800")
OFFSET_V1 = bytes.fromhex("00010000000000000001000000000000000000020000000000000003")
GROUP_KEY = bytes.fromhex("0002000762696c6c696e67")
GROUP_V4 = bytes.fromhex(
    "000409636f6e73756d6572000000030672616e6765046d2d31000000000000006302046d2d3104706f640263032f680000000a000000140b000000000000ffffffff160000000000010001740000000100000004ffffffff0000"
)
GROUP_V3 = bytes.fromhex(
    "00030008636f6e73756d657200000003000572616e676500036d2d3100000000000000630000000100036d2d310003706f6400016300022f680000000a000000140000000a000000000000ffffffff000000150000000000010001740000000100000004ffffffff"
)
MEMBER_KEY = bytes.fromhex("000500016700016d")
MEMBER_V0 = bytes.fromhex(
    "0000000372310263032f6802076f7264657273000000012c08756e69666f726d010011010000afc8020672616e67650301020000"
)
CGMETA_KEY = bytes.fromhex("0003000167")
CGMETA_V0 = bytes.fromhex("00000000000401000800000000075bcd15")
CUR_KEY = bytes.fromhex("000800016700016d")
CUR_V0 = bytes.fromhex("000000000005000000040002806930d2a8f94d14beeed531ec0edb7c030000000000000002000100")
REGEX_KEY = bytes.fromhex("001000016700036f2e2a")
SHARE_KEY = bytes.fromhex("000a00016700016d")
STREAMS_KEY = bytes.fromhex("00170003617070")

TOPIC_ID = "gGkw0qj5TRS-7tUx7A7bfA"


def test_golden_offset_commit_v4_with_topic_id_and_200_byte_metadata() -> None:
    assert decode(OFFSET_KEY, OFFSET_V4) == OffsetCommit(
        1, "billing", "orders", 7, 4, 1234, 5, "x" * 200, 1_700_000_000_000, None, TOPIC_ID
    )


def test_golden_offset_commit_v3() -> None:
    assert decode(OFFSET_KEY, OFFSET_V3) == OffsetCommit(
        1, "billing", "orders", 7, 3, 1234, 5, "x" * 200, 1_700_000_000_000, None, None
    )


def test_golden_offset_commit_v1_keeps_expire_timestamp() -> None:
    assert decode(OFFSET_KEY, OFFSET_V1) == OffsetCommit(
        1, "billing", "orders", 7, 1, 1, None, "", 2, 3, None
    )


def test_golden_group_metadata_v3_and_v4_decode_alike() -> None:
    v3, v4 = decode(GROUP_KEY, GROUP_V3), decode(GROUP_KEY, GROUP_V4)
    assert isinstance(v3, GroupMetadata) and isinstance(v4, GroupMetadata)
    assert (v3.version, v4.version) == (3, 4)
    assert v3.members == v4.members
    assert (v4.protocol_type, v4.generation, v4.protocol, v4.leader) == ("consumer", 3, "range", "m-1")
    assert v4.current_state_timestamp == 99
    member = v4.members[0]
    assert (member.member_id, member.group_instance_id, member.client_id, member.client_host) == (
        "m-1",
        "pod",
        "c",
        "/h",
    )
    assert (member.rebalance_timeout, member.session_timeout) == (10, 20)
    assert member.consumer_assignment is not None
    assert member.consumer_assignment.partitions == (TopicPartitions("t", (4,)),)


def test_golden_consumer_group_member_metadata_with_classic_tag() -> None:
    assert decode(MEMBER_KEY, MEMBER_V0) == ConsumerGroupMemberMetadata(
        "g",
        "m",
        0,
        None,
        "r1",
        "c",
        "/h",
        ("orders",),
        None,
        300,
        "uniform",
        ClassicMemberMetadata(45000, (ClassicProtocol("range", b"\x01\x02"),)),
    )


def test_golden_consumer_group_metadata_with_metadata_hash() -> None:
    assert decode(CGMETA_KEY, CGMETA_V0) == ConsumerGroupMetadata("g", 0, 4, 123456789)


def test_golden_current_member_assignment() -> None:
    assert decode(CUR_KEY, CUR_V0) == ConsumerGroupCurrentMemberAssignment(
        "g", "m", 0, 5, 4, 0, (TopicIdPartitions(TOPIC_ID, (0, 2)),), ()
    )


def test_golden_keys_of_regex_share_and_streams_records() -> None:
    assert decode(REGEX_KEY, None) == GroupTombstone(16, "g", regular_expression="o.*")
    assert decode(SHARE_KEY, None) == GroupTombstone(10, "g", member_id="m")
    assert decode(STREAMS_KEY, None) == GroupTombstone(23, "app")
