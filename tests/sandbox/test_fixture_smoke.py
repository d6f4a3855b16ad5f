"""The session fixtures give a cluster whose brokers answer."""

from __future__ import annotations

import pytest

from sandbox.cluster import SandboxCluster
from sandbox.readiness import registered_brokers

pytestmark = pytest.mark.integration


def test_kafka1_started_lists_broker_1(kafka1: SandboxCluster) -> None:
    assert registered_brokers(kafka1.bootstrap_servers) == {1}
    assert kafka1.controller_id == 1
    assert kafka1.cluster_settings().metrics_urls == [kafka1.brokers[1].metrics_url]
