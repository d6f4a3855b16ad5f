"""``/api/v1/drills`` refusals and listing (runs on the sandbox: ``tests/drills/integration``), and
what the alert API says about drills and notifications."""

from fastapi.testclient import TestClient

from tests.service.api.builders import READ_TOKEN
from tests.service.api.conftest import WRITE

READ = {"Authorization": f"Bearer {READ_TOKEN}"}


def test_post_drills_without_token_401_with_read_token_403(client: TestClient) -> None:
    assert client.post("/api/v1/drills", json={"kinds": ["rewind"]}).status_code == 401
    refused = client.post("/api/v1/drills", json={"kinds": ["rewind"]}, headers=READ)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")


def test_post_drills_unknown_kind_422_names_kinds_unknown_cluster_404(client: TestClient) -> None:
    bad = client.post("/api/v1/drills", json={"kinds": ["rewind", "meteor"]}, headers=WRITE)
    assert (bad.status_code, bad.json()["parameter"]) == (422, "kinds")
    assert "meteor" in bad.json()["message"]
    assert client.post("/api/v1/drills", json={"kinds": []}, headers=WRITE).status_code == 422
    assert (
        client.post(
            "/api/v1/drills", json={"kinds": ["lag"], "timeout_seconds": 0}, headers=WRITE
        ).status_code
        == 422
    )
    brokers = client.post("/api/v1/drills", json={"kinds": ["rewind", "unclean-election"]}, headers=WRITE)
    assert (brokers.status_code, brokers.json()["parameter"]) == (422, "kinds")
    assert "['unclean-election'] stop brokers" in brokers.json()["message"]
    gone = client.post("/api/v1/drills", json={"kinds": ["lag"], "cluster": "nope"}, headers=WRITE)
    assert (gone.status_code, gone.json()["error"]) == (404, "cluster_not_found")


def test_get_drills_empty_list_and_unknown_run_404(client: TestClient) -> None:
    assert client.get("/api/v1/drills").json() == {"drills": []}
    missing = client.get("/api/v1/drills/dr-nope")
    assert (missing.status_code, missing.json()["error"]) == (404, "drill_not_found")


def test_alert_says_whether_it_is_a_drill_and_lists_no_notifications_without_notify(
    client: TestClient,
) -> None:
    listed = client.get("/api/v1/alerts").json()["alerts"]
    assert {a["drill"] for a in listed} == {False}
    detail = client.get(f"/api/v1/alerts/{listed[0]['id']}").json()
    assert (detail["drill"], detail["notifications"]) == (False, [])
