"""Broker control for the drills that need it (unclean election, coordinator failover): only a sandbox
the drill may stop and start brokers of. A live cluster has none, and those drills refuse to run there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sandbox.cluster import SandboxCluster


class Brokers(Protocol):
    def ids(self) -> list[int]: ...
    def alive(self, broker: int) -> bool: ...
    def stop(self, broker: int) -> None: ...
    def start(self, broker: int) -> None: ...


class SandboxBrokers:
    """The brokers of a sandbox: a controlled shutdown (SIGTERM) to stop one, and a start that returns
    once the cluster lists it again."""

    def __init__(self, cluster: SandboxCluster) -> None:
        self._cluster = cluster

    def ids(self) -> list[int]:
        return sorted(self._cluster.brokers)

    def alive(self, broker: int) -> bool:
        return self._cluster.brokers[broker].alive()

    def stop(self, broker: int) -> None:
        self._cluster.stop_broker(broker)

    def start(self, broker: int) -> None:
        self._cluster.start_broker(broker)
