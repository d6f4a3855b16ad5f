from fastapi.testclient import TestClient


def test_list_clusters_configured_cluster_with_metadata_and_alert_count(client: TestClient) -> None:
    [cluster] = client.get("/api/v1/clusters").json()["clusters"]
    assert (cluster["name"], cluster["configured"], cluster["brokers"], cluster["firing_alerts"]) == (
        "prod",
        True,
        2,
        4,
    )
    assert cluster["bootstrap_servers"] == ["k1:9092", "k2:9092"]
    by_severity = cluster["firing_by_severity"]
    assert set(by_severity) == {"critical", "warning", "info"} and sum(by_severity.values()) == 4


def test_topic_partitions_log_range_leader_epoch_isr(client: TestClient) -> None:
    body = client.get("/api/v1/clusters/prod/topics/orders/partitions").json()
    p1 = body["partitions"][1]
    assert (p1["partition"], p1["log_start"], p1["log_end"], p1["leader"], p1["leader_epoch"]) == (
        1,
        20,
        80,
        1,
        3,
    )
    assert (p1["replicas"], p1["isr"]) == ([1, 2, 3], [1, 2])


def test_topic_partitions_offline_leader_null(client: TestClient) -> None:
    [p0] = client.get("/api/v1/clusters/prod/topics/payments/partitions").json()["partitions"]
    assert (p0["leader"], p0["isr"], p0["offline_replicas"]) == (None, [], [2, 3])


def test_topic_partitions_unknown_topic_404(client: TestClient) -> None:
    response = client.get("/api/v1/clusters/prod/topics/nope/partitions")
    assert (response.status_code, response.json()["error"]) == (404, "topic_not_found")


def test_audit_risky_topic_listed_with_consumers(client: TestClient) -> None:
    body = client.get("/api/v1/clusters/prod/audit").json()
    assert body["complete"] is True
    [risk] = body["risks"]
    assert risk["topic"] == "orders"
    assert risk["risks"] == ["unclean.leader.election.enable=true", "min.insync.replicas=1"]
    assert risk["consuming_groups"] == ["orders-app"]
    assert body["broker_settings"] == {"offsets.retention.minutes": "10080"}


def test_audit_unknown_cluster_404(client: TestClient) -> None:
    assert client.get("/api/v1/clusters/nope/audit").status_code == 404
