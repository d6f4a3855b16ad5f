"""KIP-320 against the three-broker sandbox: a commit past the end of its leader epoch, in a log that grew
past it under the next epoch, is detected."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import kafka.errors as kerr
import pytest
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KTopicPartition

from alerts.commits import replay
from alerts.model import EPOCH_DIVERGENCE, EpochEnd
from alerts.state import CommitKey, CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from alerts.truncation import detect_epoch_divergence
from collectors.model import TopicPartition
from service.detection.epochs import EpochEnds
from tests.collectors.integration.collector_it import create_topic, produce, unique, wait_for

pytestmark = pytest.mark.integration


def _partition(meta: Any, topic: str) -> Any:
    return next(p for p in meta.topic(topic).partitions if p.partition == 0)


def test_commit_past_its_epoch_end_is_epoch_divergence(
    kafka3: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic, group = admin_for(kafka3), unique("kip320"), unique("g")
    create_topic(admin, topic, 1, rf=2)
    c = collectors_for(kafka3)
    before = wait_for(
        lambda: (p := _partition(asyncio.run(c.metadata.collect()), topic)) and len(p.isr) == 2 and p,
        what="both replicas in sync",
    )
    produce(kafka3, topic, {0: 10})  # acks=all: the follower has all 10 at epoch e
    epoch = before.leader_epoch
    kafka3.stop_broker(before.leader)
    try:

        def moved() -> Any:
            p = _partition(asyncio.run(c.metadata.collect()), topic)
            return p if p.leader not in (None, before.leader) else None

        after = wait_for(moved, what="the follower to lead")
        assert after.leader_epoch > epoch
        produce(kafka3, topic, {0: 10})  # 10-19 under the new epoch: 15 is in the log, not a message of e

        def committed() -> bool:  # 15 at epoch e: past where epoch e ends (10)
            tp = KTopicPartition(topic, 0)
            try:
                result = admin.alter_group_offsets(group, {tp: OffsetAndMetadata(15, "", epoch)})
            except kerr.KafkaError as exc:
                if exc.retriable:
                    return False
                raise
            return all(err is kerr.NoError for err in result.values())

        wait_for(committed, what="the commit")
        tp = TopicPartition(topic, 0)
        answer = c.seam.offsets_for_leader_epoch(after.leader, [(tp, epoch)])
        meta = asyncio.run(c.metadata.collect())
        polled = CycleInputs(
            "it", offsets=asyncio.run(c.offsets.collect()), committed=asyncio.run(c.committed.collect())
        )
        commits = {k: p for k, p in replay(DetectionState(), polled).commits.items() if k.group == group}
        ends = EpochEnds("it", c.seam.offsets_for_leader_epoch)(commits, meta)
    finally:
        kafka3.start_broker(before.leader)

    assert answer == {tp: (epoch, 10)}
    assert ends == (EpochEnd(topic, 0, epoch, epoch, 10),)
    assert commits == {CommitKey(group, topic, 0): commits[CommitKey(group, topic, 0)]}
    assert (commits[CommitKey(group, topic, 0)].offset, commits[CommitKey(group, topic, 0)].leader_epoch) == (
        15,
        epoch,
    )
    findings = detect_epoch_divergence(DetectionState(), replace(polled, epoch_ends=ends), 2.0, Thresholds())
    [finding] = [f for f in findings if f.group == group]
    assert (finding.kind, finding.group, finding.topic, finding.partition) == (
        EPOCH_DIVERGENCE,
        group,
        topic,
        0,
    )
    assert finding.magnitude == {"divergence_offset": 10, "messages_diverged": 5}
