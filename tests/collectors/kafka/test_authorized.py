"""collectors.kafka.authorized.judge: Kafka's answers about a principal -> each grant held or missing."""

from __future__ import annotations

from dataclasses import replace

from collectors.acls import GRANTS, OFFSETS_TOPIC
from collectors.kafka.authorized import Answers, judge

READ, DESCRIBE, DESCRIBE_CONFIGS = frozenset({3}), frozenset({8}), frozenset({10})
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
UNKNOWN_TOPIC, GROUP_NOT_FOUND = 3, 69

ALL_GRANTED = Answers(
    brokers=3,
    cluster_operations=DESCRIBE | DESCRIBE_CONFIGS,
    broker_configs_error=0,
    topic_operations={
        "orders": DESCRIBE | DESCRIBE_CONFIGS,
        OFFSETS_TOPIC: READ | DESCRIBE | DESCRIBE_CONFIGS,
    },
    offsets_topic_error=0,
    probe_topic_error=UNKNOWN_TOPIC,
    probe_topic_configs_error=UNKNOWN_TOPIC,
    probe_group_error=GROUP_NOT_FOUND,
)


def _missing(answers: Answers) -> list[tuple[str, str, str]]:
    return [(c.grant.resource, c.grant.name, c.grant.operation) for c in judge(answers).missing]


def test_every_grant_held_nothing_missing_in_grants_order() -> None:
    judged = judge(ALL_GRANTED)
    assert [c.grant for c in judged.checks] == list(GRANTS)
    assert judged.missing == ()
    assert (judged.brokers, judged.topics_visible) == (3, 2)


def test_cluster_describe_from_its_bit_describe_configs_from_a_broker_s_configs() -> None:
    assert _missing(replace(ALL_GRANTED, cluster_operations=frozenset())) == [
        ("CLUSTER", "kafka-cluster", "DESCRIBE")
    ]
    assert _missing(replace(ALL_GRANTED, broker_configs_error=CLUSTER_AUTHORIZATION_FAILED)) == [
        ("CLUSTER", "kafka-cluster", "DESCRIBE_CONFIGS")
    ]


def test_bit_field_the_broker_did_not_compute_is_not_a_grant() -> None:
    judged = judge(replace(ALL_GRANTED, cluster_operations=None))
    assert [c.detail for c in judged.missing] == ["the broker did not say"]


def test_describe_on_every_topic_judged_by_the_made_up_topic() -> None:
    answers = replace(ALL_GRANTED, probe_topic_error=TOPIC_AUTHORIZATION_FAILED)
    [check] = judge(answers).missing
    assert (check.grant.resource, check.grant.name, check.grant.operation) == ("TOPIC", "*", "DESCRIBE")
    assert check.detail == "not granted on every topic (2 topics visible to it; others are not)"


def test_describe_configs_missing_on_visible_topics_named() -> None:
    topics = {f"t{i}": DESCRIBE for i in range(7)} | {OFFSETS_TOPIC: READ | DESCRIBE | DESCRIBE_CONFIGS}
    [check] = judge(replace(ALL_GRANTED, topic_operations=topics)).missing
    assert (check.grant.name, check.grant.operation) == ("*", "DESCRIBE_CONFIGS")
    assert check.detail == "not granted on 7 of 8 visible topics: t0, t1, t2, t3, t4 ..."


def test_offsets_topic_read_from_its_bits_or_invisible() -> None:
    no_read = {"orders": DESCRIBE | DESCRIBE_CONFIGS, OFFSETS_TOPIC: DESCRIBE | DESCRIBE_CONFIGS}
    assert _missing(replace(ALL_GRANTED, topic_operations=no_read)) == [("TOPIC", OFFSETS_TOPIC, "READ")]
    hidden = replace(
        ALL_GRANTED,
        topic_operations={"orders": DESCRIBE | DESCRIBE_CONFIGS},
        offsets_topic_error=TOPIC_AUTHORIZATION_FAILED,
    )
    [check] = judge(hidden).missing
    assert check.detail == f"{OFFSETS_TOPIC} is not even visible (no DESCRIBE on it)"


def test_group_describe_judged_by_the_made_up_group() -> None:
    assert _missing(replace(ALL_GRANTED, probe_group_error=GROUP_AUTHORIZATION_FAILED)) == [
        ("GROUP", "*", "DESCRIBE")
    ]
    assert _missing(replace(ALL_GRANTED, probe_group_error=0)) == []  # a Dead group: described
