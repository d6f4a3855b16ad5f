"""``/api/v1/clusters/{cluster}/topics/{topic}/partitions``: log range, leader, epoch and ISR."""

from __future__ import annotations

from fastapi import APIRouter

from collectors.model import OFFSETS_TOPIC, ClusterMetadata
from service.api.clusters import topic_partitions
from service.api.deps import ClusterName, ReadAccess, RuntimeDep, StoreDep, out_of_scope
from service.api.errors import READ_ERRORS, NotFound
from service.api.paths import unescape
from service.api.schemas.clusters import TopicPartitions

router = APIRouter(prefix="/api/v1/clusters/{cluster}/topics", tags=["topics"])


@router.get("/{topic}/partitions", response_model=TopicPartitions, responses=READ_ERRORS)
def partitions(
    _: ReadAccess, cluster: ClusterName, topic: str, runtime: RuntimeDep, store: StoreDep
) -> TopicPartitions:
    """Each partition's log start/end (store) and leader, leader epoch, replicas, ISR (latest metadata)."""
    name = unescape(topic)
    if name != OFFSETS_TOPIC and not runtime.scope(cluster).topic_in(name):
        raise NotFound(out_of_scope("topic", name, cluster), code="topic_out_of_scope")
    return topic_partitions(store, runtime.latest.get(cluster, ClusterMetadata), cluster, name)
