"""``/api/v1/clusters``: the watched clusters, and each one's configuration audit."""

from __future__ import annotations

from fastapi import APIRouter

from collectors.model import CommittedObservation, ConfigsObservation
from service.api import clusters as views
from service.api.deps import ClusterName, ReadAccess, RuntimeDep, SettingsDep
from service.api.errors import READ_ERRORS
from service.api.schemas.clusters import Audit, ClusterList

router = APIRouter(prefix="/api/v1/clusters", tags=["clusters"])


@router.get("", response_model=ClusterList, responses=READ_ERRORS)
def list_clusters(_: ReadAccess, runtime: RuntimeDep, settings: SettingsDep) -> ClusterList:
    """Configured clusters, then clusters only the store still holds history of."""
    alerts = runtime.alerts
    counts = alerts.firing_counts() if alerts is not None else {}
    by_cluster: dict[str, dict[str, int]] = {}
    for (_kind, severity, cluster), n in counts.items():
        by_cluster.setdefault(cluster, {"critical": 0, "warning": 0, "info": 0})
        by_cluster[cluster][severity] = by_cluster[cluster].get(severity, 0) + n
    return ClusterList(
        clusters=[
            views.cluster_out(
                name,
                settings,
                runtime.latest,
                None if alerts is None else alerts.count_firing(name),
                None if alerts is None else by_cluster.get(name, {"critical": 0, "warning": 0, "info": 0}),
            )
            for name in views.cluster_names(settings, runtime.store)
        ]
    )


@router.get("/{cluster}/audit", response_model=Audit, responses=READ_ERRORS)
async def audit(_: ReadAccess, cluster: ClusterName, runtime: RuntimeDep) -> Audit:
    """Topics configured so committed offsets can be lost or rewound (unclean election, RF < 3, ...)."""
    configs = runtime.latest.get(cluster, ConfigsObservation)
    return views.audit(cluster, configs, runtime.latest.get(cluster, CommittedObservation))
