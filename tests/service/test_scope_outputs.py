"""Nothing out of a cluster's scope reaches any public output.

The real wiring (collectors, tail, detection, store, app) over a fake seam and a fake tail: a
console-consumer group, a topic excluded by pattern and an excluded (group, topic) pair are all in the
cluster's data, with commits that would page (rewinds), and none of them shows up in the store's rows,
the API (list, detail, history, topics, alerts, clusters, audit: what the console reads), ``/metrics``
or the alerts; ``/readyz`` tells the scope and what it left out; a group out of scope answers 404.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from fastapi.testclient import TestClient

from collectors.model import CommittedOffset, GroupInfo, GroupMember, TopicPartition
from collectors.scope import Scope
from collectors.seam import ListedGroup, OffsetRange
from collectors.tail_sinks import RecentEvents
from service.app import create_app
from service.detection import FanOutSink, build_detection
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from service.wiring import build_cluster_jobs, build_cluster_tail
from store import Store
from store.alerts import AlertStore
from tests.collectors.fakes import FakeSeam, partition, snapshot
from tests.collectors.tail.fakes import FakeLog, commit

CONSOLE, HIDDEN, AUDIT = "console-consumer-4711", "__hidden", "audit"  # AUDIT on "orders" is the pair
EXCLUDED_NAMES = (CONSOLE, HIDDEN, "secret-payroll")


def _settings(tmp: Path) -> Settings:
    return load_settings(
        clusters=[
            {
                "name": "c",
                "bootstrap_servers": "k1:9092",
                "groups": {"exclude": ["console-consumer-.*"]},
                "topics": {"exclude": ["__.*", "secret-.*"]},
                "exclude_pairs": [{"group": "aud.t", "topic": "ord.rs"}],
            }
        ],
        store={"path": str(tmp / "og.db")},
        snapshots={"directory": str(tmp / "snapshots")},
        intervals={"metadata": 0.2, "offsets": 0.2, "groups": 0.2, "committed": 0.2, "configs": 0.2},
        detection={"debounce_seconds": 0.05, "min_evaluation_interval_seconds": 0.1, "snapshots": False},
    )


def _seam() -> FakeSeam:
    topics = {
        "orders": [partition("orders", 0, 1)],
        HIDDEN: [partition(HIDDEN, 0, 1)],
        "secret-payroll": [partition("secret-payroll", 0, 1)],
    }
    member = GroupMember(
        "m-1", "app", "/10.0.0.1", assignment=(TopicPartition("orders", 0), TopicPartition(HIDDEN, 0))
    )
    groups = [("billing", (member,)), (CONSOLE, (member,)), (AUDIT, (member,))]
    return FakeSeam(
        meta=snapshot([1], topics),
        offsets={TopicPartition(t, 0): OffsetRange(0, 1_000, 0) for t in topics},
        listed={1: [ListedGroup(g, "classic", "Stable", "consumer") for g, _ in groups]},
        described={g: GroupInfo(g, "classic", "Stable", "consumer", "range", m, 1) for g, m in groups},
        committed={
            g: [CommittedOffset(g, t, 0, 900, 0) for t in topics] for g in ("billing", CONSOLE, AUDIT)
        },
    )


def _tail_log() -> FakeLog:
    t = int(time.time() * 1000)
    records = []
    for group, topic in [
        (CONSOLE, "orders"),
        ("billing", HIDDEN),
        ("billing", "secret-payroll"),
        (AUDIT, "orders"),
    ]:
        records += [
            commit(len(records), group, topic, 0, 900, t - 50),
            commit(len(records) + 1, group, topic, 0, 100, t),
        ]
    # billing rewinds: pages. Its commits are made after the first committed poll (the tails start after
    # it): a tail record older than a poll that already showed the partition is history, not a page
    # (alerts/commits.replay), and whether detection evaluated that poll first would be a race.
    later = t + 60_000
    records.append(commit(len(records), "billing", "orders", 0, 950, later - 50))
    records.append(commit(len(records), "billing", "orders", 0, 500, later))
    return FakeLog({0: records})


def _runtime(settings: Settings) -> Runtime:
    cluster = settings.clusters[0]
    scope = Scope.of(cluster)
    store = Store.open(settings.store)
    alerts = AlertStore.open(settings.store)
    latest = LatestObservations()
    jobs, close = build_cluster_jobs(cluster, settings, latest, store, seam=_seam(), scope=scope)
    detection, tail_sink = build_detection(cluster, settings, latest, store, jobs, alerts=alerts, scope=scope)
    tail = build_cluster_tail(
        cluster,
        settings,
        store,
        sink=FanOutSink(RecentEvents(), tail_sink),
        consumer=_tail_log(),
        scope=scope,
    )
    detection.tail_live = lambda: tail.caught_up
    return Runtime(
        settings,
        store=store,
        latest=latest,
        jobs=jobs,
        closers=[close],
        tails=[tail],
        detections=[detection],
        alerts=alerts,
        scopes={cluster.name: scope},
    )


def _wait(client: TestClient, runtime: Runtime) -> None:
    """Ready, the tail has handed every record of the log on, and detection has evaluated all of them.

    Once the tail is caught up its records are queued in detection (the tail marks them delivered after
    its sink returned). An evaluation takes the queue when it is asked for, then may wait for the one
    running: the first to finish after this moment may have started before, the second may have taken
    the queue before the tail's last batch; the third took it after."""
    deadline = time.monotonic() + 20
    detection, tail = runtime.detections[0], runtime.tails[0]
    caught_up_at: int | None = None
    while time.monotonic() < deadline:
        if caught_up_at is None and tail.caught_up and client.get("/readyz").status_code == 200:
            caught_up_at = detection.evaluations
        if caught_up_at is not None and detection.evaluations >= caught_up_at + 3:
            return
        time.sleep(0.05)
    raise AssertionError("the service never became ready with the tail's records evaluated")


def _leaks(text: str) -> list[str]:
    return [name for name in EXCLUDED_NAMES if name in text]


def test_scope_no_public_output_names_what_is_out_of_scope(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    runtime = _runtime(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime)
    with TestClient(app) as client:
        _wait(client, runtime)
        outputs = {
            path: client.get(path)
            for path in (
                "/api/v1/clusters",
                "/api/v1/clusters/c/audit",
                "/api/v1/clusters/c/groups",
                "/api/v1/clusters/c/groups/billing",
                "/api/v1/clusters/c/groups/billing/history",
                f"/api/v1/clusters/c/groups/{AUDIT}",
                "/api/v1/clusters/c/topics/orders/partitions",
                "/api/v1/alerts",
                "/metrics",
            )
        }
        group_404 = client.get(f"/api/v1/clusters/c/groups/{CONSOLE}")
        topic_404 = client.get(f"/api/v1/clusters/c/topics/{HIDDEN}/partitions")
        ready = client.get("/readyz").json()
        firing = runtime.alerts.firing("c") if runtime.alerts is not None else ()

    for path, response in outputs.items():
        assert response.status_code == 200, (path, response.text)
        assert _leaks(response.text) == [], path
    assert "billing" in outputs["/metrics"].text and "orders" in outputs["/metrics"].text  # it can fail
    audit_detail = outputs[f"/api/v1/clusters/c/groups/{AUDIT}"].json()
    assert [p["topic"] for p in audit_detail["partitions"]] == []  # its pair with orders is out of scope

    assert group_404.status_code == 404 and group_404.json()["error"] == "group_out_of_scope"
    assert "excluded by the scope" in group_404.json()["message"]
    assert topic_404.status_code == 404 and topic_404.json()["error"] == "topic_out_of_scope"

    assert firing and all(a.group in (None, "billing") for a in firing)  # billing's own rewind pages
    assert all(a.topic not in (HIDDEN, "secret-payroll") for a in firing)

    [scope] = ready["scope"]
    assert scope["groups"]["exclude"] == ["console-consumer-.*"]
    assert (scope["excluded_groups"], scope["excluded_topics"]) == (1, 2)
    [tail] = ready["tail"]
    assert tail["out_of_scope_records"] == 8

    with sqlite3.connect(tmp_path / "og.db") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):  # names from sqlite_master
                text = " ".join(str(v) for v in row)
                assert _leaks(text) == [], (table, row)
                assert not (AUDIT in row and "orders" in row), (table, row)
