"""The aiokafka tail consumer's own logic, on a fake client (the real one: test_tail_integration)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import errors as aerr

from collectors.errors import KafkaUnavailableError
from collectors.kafka.tail import AiokafkaTailConsumer
from collectors.settings import ClusterSettings


class FakeClient:
    """Brokers 1-3; ``down`` ones fail to connect; the others answer a v5 Metadata response."""

    def __init__(self, down: set[int], partitions: int | None = 50) -> None:
        self.down = down
        self.partitions = partitions
        self.asked: list[int] = []
        brokers = [SimpleNamespace(nodeId=n) for n in (1, 2, 3)]
        self.cluster = SimpleNamespace(brokers=lambda: brokers)

    async def send(self, node: int, request: Any) -> Any:
        self.asked.append(node)
        if node in self.down:
            raise aerr.KafkaConnectionError(f"broker {node} down")
        parts = [(0, p, 1, [1], [1], [], []) for p in range(self.partitions or 0)]
        topics = [(0 if self.partitions else 3, "__consumer_offsets", True, parts)]
        brokers = [(n, "127.0.0.1", 9090 + n, None) for n in (1, 2, 3)]
        return SimpleNamespace(API_VERSION=5, brokers=brokers, controller_id=1, topics=topics)

    async def fetch_all_metadata(self) -> Any:
        raise AssertionError("the whole cluster's metadata is not asked for")


def _consumer(client: FakeClient) -> AiokafkaTailConsumer:
    consumer = AiokafkaTailConsumer(ClusterSettings(name="c1", bootstrap_servers="127.0.0.1:9091"))
    consumer._consumer = SimpleNamespace(_client=client)
    return consumer


async def test_partition_count_asks_the_next_broker_when_one_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("collectors.kafka.tail.random.shuffle", lambda nodes: None)  # 1, 2, 3 in turn
    client = FakeClient(down={1, 2})
    assert await _consumer(client).partition_count() == 50
    assert client.asked == [1, 2, 3]


async def test_partition_count_every_broker_down_raises_ours() -> None:
    client = FakeClient(down={1, 2, 3})
    with pytest.raises(KafkaUnavailableError):
        await _consumer(client).partition_count()
    assert sorted(client.asked) == [1, 2, 3]


async def test_partition_count_topic_absent_none() -> None:
    assert await _consumer(FakeClient(down=set(), partitions=None)).partition_count() is None
