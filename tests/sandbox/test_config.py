import socket

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
    first = free_ports(1)[0]
    with socket.socket() as held:
        held.bind((HOST, first))
        assert free_ports(1)[0] > first
