"""At start: the firing alerts of groups and topics the cluster's scope now leaves out are resolved.

Nothing out of scope reaches detection again (the sources drop it), so such an alert would neither
clear nor go quiet: it would page and linger. It is resolved once, with the reason ``out_of_scope``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from collectors.scope import Scope
from store.alert_records import RESOLVED, Alert, AlertWrite, Fingerprint, changed
from store.alerts import AlertStore

OUT_OF_SCOPE = "out_of_scope"


def in_scope(alert: Alert, scope: Scope) -> bool:
    """Whether ``alert``'s group, topic or group-partition is watched (a cluster-wide alert always is)."""
    group, topic = alert.group, alert.topic
    if group is not None and topic is not None:
        return scope.pair_in(group, topic)
    if group is not None:
        return scope.group_in(group)
    return topic is None or topic == "__consumer_offsets" or scope.topic_in(topic)


def resolve_out_of_scope(alerts: AlertStore, cluster: str, scope: Scope, at: float) -> tuple[Alert, ...]:
    """Resolve ``cluster``'s firing alerts out of ``scope``; the alerts as written. Blocking."""
    if scope.everything:
        return ()

    def planner(
        firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
    ) -> Sequence[AlertWrite]:
        return [
            AlertWrite(
                changed(a, status=RESOLVED, resolved_at=at, resolved_reason=OUT_OF_SCOPE),
                False,
                "resolved",
                {"reason": OUT_OF_SCOPE},
            )
            for a in firing.values()
            if not in_scope(a, scope)
        ]

    return alerts.update_firing(cluster, planner, at)
