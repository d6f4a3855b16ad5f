"""GroupsCollector over a fake seam, and the classic assignment decoder."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from collectors.errors import KafkaResponseError
from collectors.groups import GroupsCollector
from collectors.kafka.protocol import decode_assignment
from collectors.model import GroupInfo, GroupMember, TopicPartition
from collectors.seam import ListedGroup
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, source

META = metadata([1, 2], {})
BILLING = GroupInfo(
    "billing", "classic", "Stable", "consumer", "range",
    (GroupMember("m-1", "app-1", "/10.0.0.1", assignment=(TopicPartition("orders", 0),)),),
    coordinator=1,
)  # fmt: skip
SHIPPING = GroupInfo(
    "shipping", "consumer", "Stable", "consumer", "uniform",
    (GroupMember("m-2", "app-2", "/10.0.0.2", assignment=(TopicPartition("orders", 1),), member_epoch=5),),
    coordinator=2, group_epoch=5,
)  # fmt: skip
LISTED = {
    1: [ListedGroup("billing", "classic", "Stable", "consumer")],
    2: [
        ListedGroup("shipping", "consumer", "Stable", "consumer"),
        ListedGroup("sh", "share", "Empty", "share"),
    ],
}


async def test_groups_each_type_described_on_its_coordinator() -> None:
    seam = FakeSeam(listed=LISTED, described={"billing": BILLING, "shipping": SHIPPING})

    observed = await GroupsCollector(seam, CLUSTER, source(META), clock=lambda: 3.0).collect()

    assert observed.observed_at == 3.0
    assert observed.groups == (
        BILLING,
        GroupInfo("sh", "share", "Empty", "share", "", coordinator=2),
        SHIPPING,
    )
    assert observed.failures == ()
    described = sorted(c for c in seam.calls if c[0].startswith("describe"))
    assert described == [("describe_classic", 1, ("billing",)), ("describe_consumer", 2, ("shipping",))]


async def test_groups_broker_down_broker_failure_other_groups_present() -> None:
    seam = FakeSeam(listed=LISTED, described={"billing": BILLING, "shipping": SHIPPING}, down={1})

    observed = await GroupsCollector(seam, CLUSTER, source(META)).collect()

    assert [g.group_id for g in observed.groups] == ["sh", "shipping"]
    assert [(f.scope, f.key) for f in observed.failures] == [("broker", "1")]


async def test_groups_one_group_describe_error_is_group_failure() -> None:
    moved = KafkaResponseError(
        "broker answered NOT_COORDINATOR", error_code=16, error_name="NOT_COORDINATOR", cluster=CLUSTER
    )
    seam = FakeSeam(listed=LISTED, described={"billing": moved, "shipping": SHIPPING})

    observed = await GroupsCollector(seam, CLUSTER, source(META)).collect()

    assert [g.group_id for g in observed.groups] == ["sh", "shipping"]
    assert [(f.scope, f.key, f.error) for f in observed.failures] == [
        ("group", "billing", "KafkaResponseError")
    ]


def test_decode_assignment_consumer_protocol_bytes_gives_topic_partitions() -> None:
    raw = ConsumerProtocolAssignment(
        version=0, assigned_partitions=[("orders", [0, 2]), ("audit", [1])], user_data=None
    ).encode()

    assert decode_assignment(bytes(raw)) == (
        TopicPartition("orders", 0),
        TopicPartition("orders", 2),
        TopicPartition("audit", 1),
    )


def test_decode_assignment_garbage_bytes_gives_empty_assignment() -> None:
    assert decode_assignment(b"\x00\x00\xff\xff\xff") == ()
    assert decode_assignment(b"") == ()


async def test_groups_out_of_scope_never_described_and_assignments_out_of_scope_dropped() -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    console = GroupInfo("console-consumer-1", "classic", "Stable", "consumer", "range", coordinator=1)
    seam = FakeSeam(
        listed={
            1: [
                ListedGroup("billing", "classic", "Stable", "consumer"),
                ListedGroup("console-consumer-1", "classic", "Stable", "consumer"),
                ListedGroup("console-consumer-2", "consumer", "Stable", "consumer"),
            ]
        },
        described={"billing": BILLING, "console-consumer-1": console},
    )
    scope = Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"]), pairs=[("billing", "orders")])

    observed = await GroupsCollector(seam, CLUSTER, source(metadata([1], {})), scope=scope).collect()

    assert [g.group_id for g in observed.groups] == ["billing"]
    assert observed.excluded == 2
    assert observed.groups[0].members[0].assignment == ()  # billing on orders is an excluded pair
    described = [c for c in seam.calls if c[0].startswith("describe")]
    assert described == [("describe_classic", 1, ("billing",))]
