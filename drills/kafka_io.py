"""The drills' Kafka I/O: :class:`DrillKafka`, the Kafka actions of :mod:`collectors.kafka.actions` on one
cluster, with the sandbox's broker control and real group members (:mod:`collectors.kafka.member`).

The drills have no Kafka client of their own; what fails talking to Kafka raises
:class:`collectors.errors.KafkaError`, what a drill cannot run on this cluster :class:`DrillError`.
"""

from __future__ import annotations

from collectors.errors import OffsetguardError
from collectors.kafka.actions import KafkaActions
from collectors.kafka.member import ActiveMember
from collectors.settings import ClusterSettings
from drills.brokers import Brokers

CLIENT_ID = "offsetguard-drill"


class DrillError(OffsetguardError):
    """A drill cannot run here (it stops brokers, and this is not a sandbox with enough of them)."""


class DrillKafka(KafkaActions):
    """One cluster, as the drills act on it. Close with :meth:`close`."""

    def __init__(self, cluster: ClusterSettings, brokers: Brokers | None = None) -> None:
        super().__init__(cluster, CLIENT_ID)
        self._brokers = brokers

    def brokers(self, needed: int) -> Brokers:
        """Broker control, for the drills that stop brokers: a sandbox's with at least ``needed`` brokers."""
        if self._brokers is None:
            raise DrillError(
                "this drill stops brokers: it runs only on a sandbox (offsetguard drill KIND --sandbox DIR)"
            )
        if len(self._brokers.ids()) < needed:
            raise DrillError(
                f"this drill needs {needed} brokers, the sandbox has {len(self._brokers.ids())}"
                " (offsetguard sandbox up --brokers 3)"
            )
        return self._brokers

    def member(self, group: str, topic: str, reset: str = "earliest") -> ActiveMember:
        """A real member of ``group`` on partition 0 of ``topic`` (not yet joined)."""
        return ActiveMember(self.cluster, group, topic, reset, CLIENT_ID)
