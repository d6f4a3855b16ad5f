"""The expiry sandbox: one 1-node sandbox whose committed offsets expire a minute after their commit, shared
by the golden expiry test and ``tests/e2e/test_time_based.py`` (registered in ``tests/conftest.py``).

``offsets.retention.minutes=1`` (Kafka's floor) checked every second, and log retention checked every
second too (:data:`BROKER_PROPERTIES`). A test waiting for an expiry waits a minute after its commit; so
that this minute passes while the session runs other tests, the sandbox is started in the background
when the session starts, if a collected test asks for it, and a test asking for
``early_standalone_commit`` finds that commit made as soon as the sandbox was up: it waits only for what
is left of the minute (all of it when run alone). Such a test is moved to run right before the sandbox's
next user (:func:`pytest_collection_modifyitems`), so the minute is spent on the tests in between.

Fixtures (session scope):

- ``kafka_expiry``: the running sandbox. It is killed after the last test of the session that uses it
  (an idle broker checking every second costs the CPU of the tests after it), else at the session's end.
- ``early_standalone_commit``: a :class:`StandaloneCommit` made on it by a group with no members (an
  admin OffsetCommit, as an ``assign()`` consumer's) on a fresh topic of two partitions.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster, start_sandbox
from tests.parallel import APART, group

BROKER_PROPERTIES = {
    "offsets.retention.minutes": 1,
    "offsets.retention.check.interval.ms": 1000,
    "log.retention.check.interval.ms": 1000,
}
RETENTION_MS = 60_000  # offsets.retention.minutes=1
START_TIMEOUT_S = 240.0  # start_sandbox's own bound is 180 s, on cores the tests keep busy


@dataclass(frozen=True)
class StandaloneCommit:
    """``group`` committed ``offset`` for ``topic[partition]``; ``at`` is the monotonic clock after it."""

    topic: str
    group: str
    partition: int
    offset: int
    at: float


class _Starter(threading.Thread):
    """Starts the sandbox, then makes the early commit if asked; :meth:`cluster` waits for both."""

    def __init__(self, directory: Path, *, commit: bool) -> None:
        super().__init__(daemon=True, name="expiry-sandbox-starter")
        self.directory = directory
        self.commit = commit
        self._cluster: SandboxCluster | None = None
        self._early: StandaloneCommit | None = None
        self._error: BaseException | None = None
        self._killed = False
        self._lock = threading.Lock()

    def run(self) -> None:
        try:
            cluster = start_sandbox(self.directory, brokers=1, broker_properties=BROKER_PROPERTIES)
            with self._lock:
                self._cluster = cluster
                if self._killed:  # the session ended while it was starting
                    cluster.kill()
                    return
            if self.commit:
                self._early = _standalone_commit(cluster.bootstrap_servers, partition=1, offset=7)
        except BaseException as exc:  # raised again in the tests that use it
            self._error = exc

    def cluster(self) -> SandboxCluster:
        if self.ident is None:
            # an xdist worker whose first test uses it: pytest_runtest_setup ran before the session
            # fixture made this starter, so nothing started it
            self.start()
        self.join(START_TIMEOUT_S)
        if self._error is not None:
            raise RuntimeError(f"the expiry sandbox failed to start: {self._error!r}") from self._error
        if self.is_alive() or self._cluster is None:
            raise RuntimeError(f"the expiry sandbox was not up within {START_TIMEOUT_S:.0f} s")
        return self._cluster

    def early_commit(self) -> StandaloneCommit:
        self.cluster()
        assert self._early is not None, "the expiry sandbox was started without its early commit"
        return self._early

    def kill(self) -> None:
        with self._lock:
            self._killed = True
            if self._cluster is not None:
                self._cluster.kill()


def _standalone_commit(bootstrap: str, *, partition: int, offset: int) -> StandaloneCommit:
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"expiry-early-{suffix}", f"expiry-early-standalone-{suffix}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)], wait_for_metadata=True)
        result = admin.alter_group_offsets(
            group, {TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)}
        )
    finally:
        admin.close()
    errors = {tp: err for tp, err in result.items() if err.errno != 0}
    if errors:
        raise RuntimeError(f"alter_group_offsets failed: {errors}")
    return StandaloneCommit(topic, group, partition, offset, time.monotonic())


_STARTER = pytest.StashKey[_Starter]()
_LAST_USER = pytest.StashKey[str]()


@pytest.fixture(scope="session", autouse=True)
def _expiry_sandbox_early(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Starts the expiry sandbox in the background before the first test, if a collected test uses it."""
    users = [item for item in request.session.items if "kafka_expiry" in _fixtures(item)]
    if not users:
        yield
        return
    commit = any("early_standalone_commit" in _fixtures(item) for item in users)
    starter = _Starter(tmp_path_factory.mktemp("kafka-expiry"), commit=commit)
    request.config.stash[_STARTER] = starter
    request.config.stash[_LAST_USER] = users[-1].nodeid
    if not hasattr(request.config, "workerinput"):
        starter.start()
    # else an xdist worker: started at the first test it runs of the group its users are in (APART, by the
    # fixture: tests/parallel.py), so only the worker that runs them starts it
    try:
        yield
    finally:
        starter.kill()  # throwaway: no controlled shutdown


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests using ``early_standalone_commit`` run right before the first other test of the sandbox
    after them (after any ``--module-order``): the minute their expiry takes passes while the tests between
    run (in ``make test``, from the session's start to ``tests/e2e/test_time_based.py``), not while they
    wait. Alone, or with no other user after them, they stay where they are."""
    early = [item for item in items if "early_standalone_commit" in _fixtures(item)]
    later = [item for item in items if "kafka_expiry" in _fixtures(item) and item not in early]
    if not early or not later or items.index(later[0]) < items.index(early[0]):
        return
    for item in early:
        items.remove(item)
    at = items.index(later[0])
    items[at:at] = early


def _fixtures(item: pytest.Item) -> list[str]:
    return list(getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def kafka_expiry(request: pytest.FixtureRequest) -> SandboxCluster:
    """One broker+controller node with :data:`BROKER_PROPERTIES`, started in the background."""
    return request.config.stash[_STARTER].cluster()


@pytest.fixture(scope="session")
def early_standalone_commit(request: pytest.FixtureRequest, kafka_expiry: SandboxCluster) -> StandaloneCommit:
    """A standalone commit of offset 7 on partition 1, made as soon as ``kafka_expiry`` was up."""
    return request.config.stash[_STARTER].early_commit()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """On an xdist worker, starts the expiry sandbox at the first test it runs of its users' group."""
    starter = item.config.stash.get(_STARTER, None)
    if starter is not None and starter.ident is None and group(item) == APART:
        starter.start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """Kills the expiry sandbox once the last test using it is torn down (its module fixtures included)."""
    try:
        return (yield)
    finally:
        if item.config.stash.get(_LAST_USER, None) == item.nodeid:
            item.config.stash[_STARTER].kill()
