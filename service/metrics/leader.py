"""The leadership families (issue 46): which replica is active, at which epoch. Only with ``ha`` on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric


def leader_families(view: Mapping[str, Any] | None) -> Iterator[Metric]:
    """From :meth:`service.ha.Leadership.view`; nothing without one (a single replica)."""
    if view is None:
        return
    replica = str(view["replica"])
    leader = GaugeMetricFamily(
        "offsetguard_leader",
        "1 on the active replica (it holds the leader lease), 0 on a standby.",
        labels=["replica"],
    )
    leader.add_metric([replica], 1 if view["role"] == "active" else 0)
    yield leader
    epoch = GaugeMetricFamily(
        "offsetguard_leader_epoch",
        "The leader lease's epoch as this replica last read it (it grows at every takeover).",
        labels=["replica"],
    )
    if view.get("epoch") is not None:
        epoch.add_metric([replica], float(view["epoch"]))
    yield epoch
    info = InfoMetricFamily(
        "offsetguard_leader_lease",
        "This replica's role, the lease's holder and epoch as last read.",
        labels=["replica"],
    )
    info.add_metric(
        [replica],
        {
            "role": str(view["role"]),
            "holder": str(view.get("holder") or ""),
            "epoch": str(view.get("epoch") or ""),
        },
    )
    yield info
