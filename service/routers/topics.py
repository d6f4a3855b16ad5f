"""``/api/v1/clusters/{cluster}/topics/{topic}/partitions``: log range, leader, epoch and ISR."""

from __future__ import annotations

from fastapi import APIRouter

from collectors.model import ClusterMetadata
from service.api.clusters import topic_partitions
from service.api.deps import ClusterName, ReadAccess, RuntimeDep, StoreDep
from service.api.errors import READ_ERRORS
from service.api.paths import unescape
from service.api.schemas.clusters import TopicPartitions

router = APIRouter(prefix="/api/v1/clusters/{cluster}/topics", tags=["topics"])


@router.get("/{topic}/partitions", response_model=TopicPartitions, responses=READ_ERRORS)
def partitions(
    _: ReadAccess, cluster: ClusterName, topic: str, runtime: RuntimeDep, store: StoreDep
) -> TopicPartitions:
    """Each partition's log start/end (store) and leader, leader epoch, replicas, ISR (latest metadata)."""
    return topic_partitions(store, runtime.latest.get(cluster, ClusterMetadata), cluster, unescape(topic))
