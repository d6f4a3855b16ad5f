import socket
from concurrent.futures import ThreadPoolExecutor

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
