"""Literal data for the API tests: one cluster "prod" with two topics, a few groups (odd names
included), three offsets polls, and alerts, written into a real temporary Store and AlertStore."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    ConfigsObservation,
    Failure,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicConfig,
    TopicInfo,
    TopicPartition,
)
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from store import Store
from store.alert_records import FIRING, Alert, AlertWrite
from store.alerts import AlertStore

CLUSTER = "prod"
T0 = 1_700_000_000.0
NOW = T0 + 120
READ_TOKEN = "read-token-0123456789"
WRITE_TOKEN = "write-token-0123456789"
ODD_GROUPS = ("a/b", "ü.ñ", "😀", "..", "%2F", "x/history")


def settings_for(tmp: Path, **api: Any) -> Settings:
    return load_settings(
        clusters=[{"name": CLUSTER, "bootstrap_servers": "k1:9092,k2:9092"}],
        store={"path": str(tmp / "og.db")},
        snapshots={"directory": str(tmp / "snapshots")},
        api={
            "tokens": [
                {"name": "reader", "token": READ_TOKEN, "scopes": ["read"]},
                {"name": "alice", "token": WRITE_TOKEN, "scopes": ["write"]},
            ],
            "runbook_base_url": "https://runbooks.example/offsetguard/",
            **api,
        },
    )


def seg(name: str) -> str:
    """``name`` as one URL path segment ('.' and '..' encoded too, so no client normalises them away)."""
    encoded = quote(name, safe="")
    return encoded.replace(".", "%2E") if set(name) <= {"."} else encoded


def _offsets(at: float, ranges: dict[tuple[str, int], tuple[int, int]]) -> OffsetsObservation:
    return OffsetsObservation(
        CLUSTER, at, tuple(PartitionOffsets(t, p, s, e, 1, 3) for (t, p), (s, e) in ranges.items())
    )


def _committed(at: float, offsets: dict[str, dict[tuple[str, int], int]]) -> CommittedObservation:
    rows = tuple(CommittedOffset(g, t, p, o, 3) for g, per in offsets.items() for (t, p), o in per.items())
    return CommittedObservation(CLUSTER, at, rows, tuple(offsets))


def seed_store(store: Store) -> None:
    """Offsets at T0, T0+60 and T0+90; commits at T0 and T0+60 (the second one rewinds orders-app)."""
    store.record_offsets(
        _offsets(T0, {("orders", 0): (0, 100), ("orders", 1): (0, 50), ("payments", 0): (10, 30)})
    )
    first = {
        "orders-app": {("orders", 0): 90, ("orders", 1): 50},
        "clampy": {("orders", 0): 250, ("orders", 1): 5, ("payments", 0): 15},
        **{g: {("payments", 0): 12} for g in ODD_GROUPS},
    }
    store.record_committed(_committed(T0, first))
    store.record_offsets(
        _offsets(T0 + 60, {("orders", 0): (0, 200), ("orders", 1): (20, 80), ("payments", 0): (10, 30)})
    )
    later = {**first, "orders-app": {("orders", 0): 150, ("orders", 1): 10}}
    later["clampy"] = {**first["clampy"], ("orders", 2): 7}
    store.record_committed(_committed(T0 + 60, later))
    store.record_offsets(
        _offsets(T0 + 90, {("orders", 0): (0, 200), ("orders", 1): (20, 80), ("payments", 0): (10, 30)})
    )


def alert(
    alert_id: str,
    kind: str,
    severity: str,
    at: float,
    *,
    group: str | None = "orders-app",
    topic: str | None = "orders",
    partition: int | None = 0,
) -> Alert:
    return Alert(
        id=alert_id,
        kind=kind,
        severity=severity,
        status=FIRING,
        cluster=CLUSTER,
        group=group,
        topic=topic,
        partition=partition,
        started_at=at,
        updated_at=at,
        summary=f"{kind} on {group}",
        cause=None,
        magnitude={"messages": 60},
        magnitude_total={"messages": 60},
        evidence={"old_offset": 90, "new_offset": 30},
        occurrence=f"{alert_id}-1",
        occurrences=1,
    )


ALERTS = (
    alert("al-rewind", "offset_rewind", "critical", T0 + 10),
    alert("al-lag", "lag_high", "warning", T0 + 20, partition=1),
    alert("al-config", "config_risk", "warning", T0 + 30, group=None, partition=None),
    alert("al-odd", "lag_high", "info", T0 + 40, group="a/b", topic="payments"),
)


def seed_alerts(alerts: AlertStore, rows: Iterable[Alert] = ALERTS) -> None:
    for a in rows:
        alerts.update_firing(CLUSTER, lambda firing, done, a=a: [AlertWrite(a, True, "fired")], a.started_at)


HIDDEN_GROUP = "acl-hidden"


def latest_observations() -> LatestObservations:
    latest = LatestObservations()
    member = GroupMember("m-1", "orders-client", "/10.0.0.7", None, (TopicPartition("orders", 0),), 5)
    groups = GroupsObservation(
        CLUSTER,
        T0 + 100,
        (
            GroupInfo("orders-app", "consumer", "Stable", "consumer", "uniform", (member,), 1, 7),
            GroupInfo("clampy", "classic", "Empty", "consumer", "", (), 1, 3),
            GroupInfo("polled-only", "classic", "Empty", "consumer", "", (), 1, 1),
        ),
        # an ACL refuses DescribeGroups and OffsetFetch of this one (listed thanks to DESCRIBE on the cluster)
        (Failure("group", HIDDEN_GROUP, "KafkaAuthError", "broker answered GROUP_AUTHORIZATION_FAILED"),),
    )
    topics = (
        TopicInfo(
            "orders", False, tuple(PartitionInfo("orders", p, 1, 3, (1, 2, 3), (1, 2)) for p in (0, 1))
        ),
        TopicInfo("payments", False, (PartitionInfo("payments", 0, None, 4, (2, 3), (), (2, 3)),)),
    )
    meta = ClusterMetadata(
        CLUSTER, T0 + 100, "cid", 1, (Broker(1, "k1", 9092), Broker(2, "k2", 9092)), topics
    )
    configs = ConfigsObservation(
        CLUSTER,
        T0 + 100,
        (
            TopicConfig("orders", 604_800_000, None, ("delete",), True, 1, 3),
            TopicConfig("payments", None, None, ("delete",), False, 2, 3),
        ),
        broker=(("offsets.retention.minutes", "10080"),),
    )
    committed = _committed(T0 + 60, {"orders-app": {("orders", 0): 150}, "clampy": {("payments", 0): 15}})
    committed = dataclasses.replace(
        committed, failures=(Failure("group", HIDDEN_GROUP, "KafkaAuthError", "GROUP_AUTHORIZATION_FAILED"),)
    )
    for obs in (groups, meta, configs, committed):
        asyncio.run(latest.put(obs))
    return latest


def build(settings: Settings, *, alerts: bool = True, seed: bool = True) -> Runtime:
    """A runtime over a real store (and alert store) in ``settings.store.path`` holding the literal data."""
    store = Store.open(settings.store)
    alert_store = AlertStore.open(settings.store) if alerts else None
    if seed:
        seed_store(store)
        if alert_store is not None:
            seed_alerts(alert_store)
    return Runtime(settings, store=store, latest=latest_observations(), jobs=[], alerts=alert_store)
