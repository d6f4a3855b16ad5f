"""OffsetForLeaderEpoch through the real seam (over a stand-in connection manager) and the fake seam."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kafka.future import Future
from kafka.protocol.consumer import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

from collectors.errors import KafkaResponseError, KafkaUnavailableError
from collectors.kafka.seam import KafkaPythonSeam
from collectors.model import TopicPartition
from collectors.settings import ClusterSettings
from tests.collectors.fakes import FakeSeam

_Topic = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
_End = _Topic.EpochEndOffset
FENCED_LEADER_EPOCH = 74
NOT_LEADER_OR_FOLLOWER = 6


class _Manager:
    """Runs the seam's coroutine on a private loop and answers each request with ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.sent: list[tuple[Any, int | None]] = []

    def run(self, work: Any, manager: Any) -> Any:
        return asyncio.run(work(manager))

    def send(self, request: Any, node_id: int | None = None) -> Future:
        self.sent.append((request, node_id))
        if isinstance(self.answer, BaseException):
            return Future().failure(self.answer)
        return Future().success(self.answer)


def _seam(manager: _Manager) -> KafkaPythonSeam:
    admin = type("Admin", (), {"_manager": manager, "close": lambda self: None})()
    return KafkaPythonSeam(
        ClusterSettings(name="t", bootstrap_servers=["127.0.0.1:1"]), admin_factory=lambda **_: admin
    )


def test_real_seam_sends_one_consumer_request_and_reads_ends_and_errors() -> None:
    response = OffsetForLeaderEpochResponse(
        throttle_time_ms=0,
        topics=[
            _Topic(
                topic="a",
                partitions=[
                    _End(error_code=0, partition=0, leader_epoch=3, end_offset=10),
                    _End(error_code=FENCED_LEADER_EPOCH, partition=1, leader_epoch=-1, end_offset=-1),
                ],
            ),
            _Topic(topic="b", partitions=[_End(error_code=0, partition=2, leader_epoch=-1, end_offset=-1)]),
        ],
    )
    manager = _Manager(response)
    got = _seam(manager).offsets_for_leader_epoch(
        7, [(TopicPartition("a", 0), 3), (TopicPartition("a", 1), 4), (TopicPartition("b", 2), 0)]
    )
    [(request, node)] = manager.sent
    assert node == 7
    assert isinstance(request, OffsetForLeaderEpochRequest)
    assert request.replica_id == -1
    asked = {
        (t.topic, p.partition, p.leader_epoch, p.current_leader_epoch)
        for t in request.topics
        for p in t.partitions
    }
    assert asked == {("a", 0, 3, -1), ("a", 1, 4, -1), ("b", 2, 0, -1)}
    assert got[TopicPartition("a", 0)] == (3, 10)
    assert got[TopicPartition("b", 2)] == (-1, -1)
    err = got[TopicPartition("a", 1)]
    assert isinstance(err, KafkaResponseError) and err.partition == 1 and err.topic == "a"


def test_real_seam_translates_a_failed_request_and_skips_empty() -> None:
    import kafka.errors as kerr

    manager = _Manager(kerr.NodeNotReadyError("down"))
    seam = _seam(manager)
    assert seam.offsets_for_leader_epoch(1, []) == {}
    assert manager.sent == []
    with pytest.raises(KafkaUnavailableError):
        seam.offsets_for_leader_epoch(1, [(TopicPartition("a", 0), 1)])


def test_fake_seam_answers_known_ends_unknown_as_undefined_and_down_brokers_raise() -> None:
    tp = TopicPartition("a", 0)
    fake = FakeSeam(epoch_ends={(tp, 2): (2, 10)}, down={3})
    assert fake.offsets_for_leader_epoch(1, [(tp, 2)]) == {tp: (2, 10)}
    assert fake.offsets_for_leader_epoch(1, [(tp, 5)]) == {tp: (-1, -1)}
    with pytest.raises(KafkaUnavailableError):
        fake.offsets_for_leader_epoch(3, [(tp, 2)])
    assert fake.calls[0] == ("offsets_for_leader_epoch", 1, ((tp, 2),))
