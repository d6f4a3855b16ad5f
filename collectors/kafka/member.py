"""A real member of a consumer group, for the drills: it joins, is assigned the partition, heartbeats, and
commits as an application does (:class:`ActiveMember`, on aiokafka in a thread of its own).

Every call is bounded in time; a Kafka failure raises :class:`collectors.errors.KafkaError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import kafka.errors as kerr
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioPartition

from collectors.errors import KafkaError
from collectors.kafka.tail import consumer_kwargs
from collectors.settings import ClusterSettings

T = TypeVar("T")


class ActiveMember:
    """A real group member of ``topic`` (one partition), run by aiokafka on its own event loop thread."""

    def __init__(self, cluster: ClusterSettings, group: str, topic: str, reset: str, client_id: str) -> None:
        kwargs = consumer_kwargs(cluster, client_id)
        for key in ("group_id", "isolation_level", "exclude_internal_topics", "auto_offset_reset"):
            kwargs.pop(key, None)
        self._kwargs = {**kwargs, "group_id": group, "auto_offset_reset": reset, "enable_auto_commit": False}
        self.group, self.topic = group, topic
        self._tp = AioPartition(topic, 0)
        self._consumer: AIOKafkaConsumer | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"drill-{group}", daemon=True)
        self._thread.start()

    def _call(self, what: str, work: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError as exc:
            future.cancel()
            raise KafkaError(f"{what} of {self.group}: not done in {timeout:.0f} s") from exc
        except kerr.KafkaError as exc:
            raise KafkaError(f"{what} of {self.group}: {exc!r}") from exc
        except Exception as exc:  # aiokafka's own errors
            if type(exc).__module__.startswith("aiokafka"):
                raise KafkaError(f"{what} of {self.group}: {exc!r}") from exc
            raise

    def join(self, timeout: float = 60.0) -> None:
        """Subscribe and wait until the member is assigned the partition."""

        async def join() -> None:
            consumer = AIOKafkaConsumer(self.topic, **self._kwargs)
            self._consumer = consumer
            await consumer.start()
            while self._tp not in consumer.assignment():
                await consumer.getmany(timeout_ms=200)

        self._call("join", join(), timeout)

    def commit(self, offset: int) -> None:
        """Commit ``offset`` as the member (what an application's commit after a seek does)."""
        consumer = self._joined()
        self._call("commit", consumer.commit({self._tp: offset}))

    def commit_position(self, committed: int, timeout: float = 30.0) -> int:
        """Fetch until the member's position leaves ``committed`` (an out-of-range fetch answered and
        ``auto.offset.reset`` applied: the position starts at the committed offset and only a fetch shows
        it unfetchable), commit it, and return it."""
        consumer = self._joined()

        async def reset_and_commit() -> int:
            while (position := await consumer.position(self._tp)) == committed:
                await consumer.getmany(self._tp, timeout_ms=200)
            await consumer.commit({self._tp: position})
            return int(position)

        return self._call("reset and commit", reset_and_commit(), timeout)

    def stop(self) -> None:
        """Leave the group and stop the loop (a second call does nothing)."""
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            with contextlib.suppress(KafkaError):
                self._call("leave", consumer.stop(), timeout=30)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def _joined(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            raise KafkaError(f"the member of {self.group} has not joined")
        return self._consumer
