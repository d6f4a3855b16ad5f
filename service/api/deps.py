"""Dependencies of the API routes, as ``Annotated`` aliases so route signatures read like prose.

Everything comes from ``request.app.state`` (settings, clock, runtime), which :func:`service.app.create_app`
fills; nothing here is global. Blocking work never happens here: routes that read the store are plain
``def`` functions and run in the thread pool, except the hot reads (alert list, group detail), which do
a few indexed reads on WAL reader connections on the event loop because the hop costs more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from collectors.settings import ClusterSettings
from collectors.snapshots import SnapshotResult
from collectors.snapshots.dump import dump_group
from service.api.auth import Principal, authorize
from service.api.errors import NotFound, Unavailable
from service.api.paths import unescape
from service.runtime import Runtime
from service.settings import Settings
from store import Store
from store.alerts import AlertStore

GROUP_HELP = (
    "Consumer group id, percent-encoded as one path segment (a '/' in the id is sent as %2F, '%' as %25)"
)

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="A token from api.tokens; 'read' scope for reads (when api.reads_require_auth), "
    "'write' for acknowledgements and snapshots.",
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        raise Unavailable("the service is not running yet")
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def get_store(runtime: RuntimeDep) -> Store:
    if runtime.store is None:
        raise Unavailable("the offset history store is not open", code="store_unavailable")
    return runtime.store


StoreDep = Annotated[Store, Depends(get_store)]


async def get_alerts(runtime: RuntimeDep) -> AlertStore:
    if runtime.alerts is None:
        raise Unavailable("alerts are not kept (detection is disabled)", code="alerts_unavailable")
    return runtime.alerts


AlertsDep = Annotated[AlertStore, Depends(get_alerts)]


async def get_now(request: Request) -> float:
    now: float = request.app.state.clock()
    return now


NowDep = Annotated[float, Depends(get_now)]


async def read_access(settings: SettingsDep, credentials: Credentials) -> Principal:
    return authorize(settings.api, credentials.credentials if credentials else None, "read")


async def write_access(settings: SettingsDep, credentials: Credentials) -> Principal:
    return authorize(settings.api, credentials.credentials if credentials else None, "write")


ReadAccess = Annotated[Principal, Depends(read_access)]
WriteAccess = Annotated[Principal, Depends(write_access)]


async def known_cluster(
    cluster: Annotated[str, Path(description="Cluster name, as configured")],
    settings: SettingsDep,
    runtime: RuntimeDep,
) -> str:
    """A configured cluster, or one the store holds history of; else 404."""
    name = unescape(cluster)
    if settings.cluster(name) is not None:
        return name
    if runtime.store is not None and name in await asyncio.to_thread(runtime.store.clusters):
        return name
    raise NotFound(f"unknown cluster {name!r}", code="cluster_not_found")


ClusterName = Annotated[str, Depends(known_cluster)]


async def configured_cluster(cluster: ClusterName, settings: SettingsDep) -> ClusterSettings:
    """A cluster offsetguard can connect to (history alone is not enough to take a snapshot)."""
    found = settings.cluster(cluster)
    if found is None:
        raise NotFound(
            f"cluster {cluster!r} is not configured: cannot connect to it", code="cluster_not_found"
        )
    return found


ConfiguredCluster = Annotated[ClusterSettings, Depends(configured_cluster)]


async def group_name(
    group: Annotated[str, Path(description=GROUP_HELP)], cluster: ClusterName, runtime: RuntimeDep
) -> str:
    """The group id, unless the cluster's scope leaves it out: then 404, saying so."""
    name = unescape(group)
    if not runtime.scope(cluster).group_in(name):
        raise NotFound(out_of_scope("group", name, cluster), code="group_out_of_scope")
    return name


def out_of_scope(kind: str, name: str, cluster: str) -> str:
    """The message of a 404 for a group or topic the scope of ``cluster`` leaves out."""
    return (
        f"{kind} {name!r} is excluded by the scope of cluster {cluster!r} (its {kind}s and exclude_pairs "
        "settings): offsetguard does not watch it"
    )


GroupName = Annotated[str, Depends(group_name)]

# Takes a snapshot of one group's __consumer_offsets partition; blocking (a worker thread calls it).
SnapshotTaker = Callable[[ClusterSettings, str, Settings, Store], SnapshotResult]


def _dump(cluster: ClusterSettings, group: str, settings: Settings, store: Store) -> SnapshotResult:
    return dump_group(cluster, group, settings.snapshots, trigger="manual", index=store)


async def snapshot_taker() -> SnapshotTaker:
    """The real dump over a fresh Kafka reader; tests hand in their own via ``dependency_overrides``."""
    return _dump


SnapshotTakerDep = Annotated[SnapshotTaker, Depends(snapshot_taker)]
