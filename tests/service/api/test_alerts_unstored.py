"""The alerts API while the store refuses writes: alerts kept in memory by detection are listed (first
page, newest first) and found by id with their kept history, beside what the file holds."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from fastapi.testclient import TestClient

from service.app import create_app
from service.detection.backlog import AlertBacklog
from service.settings import Settings
from store.alert_records import RESOLVED, AlertWrite
from tests.service.api.builders import NOW, alert, build


def _kept(runtime: object) -> AlertBacklog:
    backlog = AlertBacklog()
    backlog.start([])
    new = alert("al-memory", "offset_rewind", "critical", NOW - 1, group="billing")
    backlog.plan(lambda firing, resolved: [AlertWrite(new, True, "fired")], NOW - 1)
    stored_lag = alert("al-lag", "lag_high", "warning", NOW)
    done = replace(stored_lag, status=RESOLVED, resolved_at=NOW, resolved_reason="cleared")
    backlog.plan(lambda firing, resolved: [AlertWrite(done, False, "resolved")], NOW)
    return backlog


def test_alerts_api_store_refusing_writes_lists_and_finds_memory_alerts(settings: Settings) -> None:
    runtime = build(settings)
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)
    with TestClient(app) as client:
        before = client.get("/api/v1/alerts").json()
        runtime.detections = [SimpleNamespace(backlog=_kept(runtime))]  # type: ignore[list-item]
        try:
            listed = client.get("/api/v1/alerts").json()
            firing = client.get("/api/v1/alerts", params={"status": "firing"}).json()
            billing = client.get("/api/v1/alerts", params={"group": "billing"}).json()
            one = client.get("/api/v1/alerts/al-memory").json()
            lag = client.get("/api/v1/alerts/al-lag").json()
        finally:
            runtime.detections = []

    stored_ids = [a["id"] for a in before["alerts"]]
    assert [a["id"] for a in listed["alerts"]] == ["al-lag", "al-memory"] + [
        i for i in stored_ids if i != "al-lag"
    ]
    assert listed["alerts"][0]["status"] == "resolved"  # memory's version, not the file's
    assert "al-memory" in [a["id"] for a in firing["alerts"]]
    assert "al-lag" not in [a["id"] for a in firing["alerts"]]
    assert [a["id"] for a in billing["alerts"]] == ["al-memory"]
    assert (one["status"], [t["transition"] for t in one["transitions"]]) == ("firing", ["fired"])
    assert one["transitions"][0]["detail"]["notified_from_memory"] is True
    assert lag["status"] == "resolved"
    assert lag["transitions"][-1]["transition"] == "resolved"  # after the stored history
    assert len(lag["transitions"]) >= 2
