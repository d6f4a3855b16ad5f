"""One active replica with fencing (issue 46, docs/ha.md): the leadership state machine over the leader
lease (:mod:`store.lease`, :mod:`store.fencing`) and the writers only the active replica runs."""

from service.ha.leadership import ACTIVE, STANDBY, Leadership, ha_enabled, replica_id
from service.ha.writers import ActiveWriters, GatedPositions, gated_sink

__all__ = [
    "ACTIVE",
    "STANDBY",
    "ActiveWriters",
    "GatedPositions",
    "Leadership",
    "gated_sink",
    "ha_enabled",
    "replica_id",
]
