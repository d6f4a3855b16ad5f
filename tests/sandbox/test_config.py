import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandbox import config
from sandbox.config import HOST, LOWEST_PORT, ephemeral_range, free_ports


def test_free_ports_distinct_bindable_and_below_the_ephemeral_range() -> None:
    low, high = ephemeral_range()
    assert low <= high
    ports = free_ports(12)
    assert len(set(ports)) == 12
    assert all(LOWEST_PORT <= p < low for p in ports), (ports, low)
    for port in ports:
        with socket.socket() as sock:
            sock.bind((HOST, port))


def test_free_ports_skip_a_port_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config.random, "shuffle", lambda items: None)  # candidates in ascending order
    monkeypatch.setattr(config, "_HANDED", set())
    first = free_ports(1)[0]
    config._HANDED.discard(first)  # only the bind below keeps it from being handed again
    with socket.socket() as held:
        held.bind((HOST, first))
        assert free_ports(1)[0] > first


def test_free_ports_never_hand_a_port_out_twice_even_from_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config.random, "shuffle", lambda items: None)  # every call tries the same first
    monkeypatch.setattr(config, "_HANDED", set())
    with ThreadPoolExecutor(4) as pool:
        handed = list(pool.map(free_ports, [25] * 8))
    every = [port for ports in handed for port in ports]
    assert len(every) == len(set(every)) == 200


@pytest.mark.parametrize("brokers", [2, 3, 6])
def test_plan_nodes_a_controller_and_any_number_of_brokers_on_distinct_ports(brokers: int) -> None:
    controller, *rest = config.plan_nodes(brokers)
    assert (controller.node_id, controller.is_broker, controller.is_controller) == (
        config.CONTROLLER_ID,
        False,
        True,
    )
    assert [n.node_id for n in rest] == list(range(1, brokers + 1))
    assert all(n.is_broker and not n.is_controller for n in rest)
    ports = [p for n in (controller, *rest) for p in (n.port, n.controller_port, n.metrics_port) if p]
    assert len(ports) == len(set(ports)) == 2 + 2 * brokers


def test_plan_nodes_refuses_no_broker() -> None:
    with pytest.raises(config.SandboxError, match="at least 1"):
        config.plan_nodes(0)


def test_internal_topics_replicated_at_most_three_times() -> None:
    broker = config.plan_nodes(6)[1]
    text = config.render_properties(
        broker, voters="100@127.0.0.1:1", data_dir=Path("/tmp/x"), broker_count=6, offsets_partitions=50
    )
    assert "offsets.topic.replication.factor=3" in text
    assert "transaction.state.log.replication.factor=3" in text
