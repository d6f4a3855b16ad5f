"""Shared fixtures: the real sandbox Kafka, started lazily once per session.

``kafka1`` is one combined broker+controller node; ``kafka3`` is one controller-only node (id 100) and
three brokers (ids 1, 2, 3); ``kafka_sasl`` is a secured 1-node sandbox. Each is started only when a test
asks for it and torn down at session end;
their JVMs also die with this process (PR_SET_PDEATHSIG) if pytest is killed. Tests that use them are
marked ``@pytest.mark.integration``. ``spark`` is the one local[2] SparkSession of the session (pipeline
tests and the e2e pipeline-vs-online checks). Sub-directory conftests add their own fixtures; keep this
one small.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sandbox.cluster import SandboxCluster, start_sandbox

pytest_plugins = [
    "tests.ordering",  # --module-order=reverse|random[:SEED]
    "tests.parallel",  # under xdist: every test of a real component on one worker (make test: -n 2)
    "tests.support.postgres",  # postgres_server (one per session), postgres_url: a real PostgreSQL
    "tests.support.expiry",  # kafka_expiry: offsets expire after a minute; early_standalone_commit
]


@pytest.fixture(scope="session")
def kafka1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxCluster]:
    """A 1-node sandbox (node 1 is broker and controller)."""
    cluster = start_sandbox(tmp_path_factory.mktemp("kafka1"), brokers=1)
    try:
        yield cluster
    finally:
        cluster.kill()  # throwaway: no controlled shutdown at session end


@pytest.fixture(scope="session")
def kafka3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxCluster]:
    """Controller 100 plus brokers 1, 2, 3; tests that stop brokers must start them again."""
    # retention checked every second (default 5 min): the truth matrix's time-retention cells
    cluster = start_sandbox(
        tmp_path_factory.mktemp("kafka3"),
        brokers=3,
        broker_properties={"log.retention.check.interval.ms": 1000},
    )
    try:
        yield cluster
    finally:
        cluster.kill()  # throwaway: no controlled shutdown at session end


@pytest.fixture(scope="session")
def kafka_sasl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxCluster]:
    """A 1-node secured sandbox: SASL_SSL with SCRAM-SHA-512, the StandardAuthorizer, ``User:admin`` a super
    user and ``User:offsetguard`` granted exactly :data:`collectors.acls.GRANTS`."""
    cluster = start_sandbox(tmp_path_factory.mktemp("kafka-sasl"), brokers=1, secure="sasl_ssl")
    try:
        yield cluster
    finally:
        cluster.kill()  # throwaway: no controlled shutdown at session end


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """local[2], 2 shuffle partitions, no UI, the Kafka source's jars on the classpath."""
    pytest.importorskip("pyspark")
    from pipeline.session import build_session, ensure_kafka_jars

    session = build_session(
        master="local[2]",
        app_name="offsetguard-tests",
        shuffle_partitions=2,
        ui=False,
        kafka_jars=ensure_kafka_jars(),
        conf={"spark.driver.memory": "1g", "spark.default.parallelism": "2"},
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
