"""End-to-end incident tests: the real runtime (collectors, tail, detection, store, snapshots) on the
3-broker sandbox. Each module gets its own runtime and store (``runtime3``); scenarios use their own topics
and groups, and every broker a test stops is started again before it returns."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.cluster import SandboxCluster
from tests.e2e.harness import RuntimeThread, e2e_settings


@pytest.fixture(scope="module")
def runtime3(kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuntimeThread]:
    """The real runtime on ``kafka3`` with 1 s collector intervals, caught up with the tail."""
    runtime = RuntimeThread(e2e_settings(kafka3, tmp_path_factory.mktemp("e2e-runtime")))
    try:
        runtime.wait_caught_up()
        yield runtime
    finally:
        runtime.stop()


@pytest.fixture
def restore_brokers(kafka3: SandboxCluster) -> Iterator[SandboxCluster]:
    """``kafka3``, with every broker it stopped started again afterwards (other tests share it)."""
    yield kafka3
    for broker_id, node in kafka3.brokers.items():
        if not node.alive():
            kafka3.start_broker(broker_id)
