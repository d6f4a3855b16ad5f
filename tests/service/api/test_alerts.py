from fastapi.testclient import TestClient

from tests.service.api.builders import T0
from tests.service.api.conftest import WRITE


def _ids(response_json: dict[str, object]) -> list[str]:
    return [a["id"] for a in response_json["alerts"]]  # type: ignore[attr-defined]


def test_list_alerts_no_filter_newest_first_with_runbook(client: TestClient) -> None:
    body = client.get("/api/v1/alerts").json()
    assert _ids(body) == ["al-odd", "al-config", "al-lag", "al-rewind"]
    assert body["next_cursor"] is None
    assert body["alerts"][3]["runbook_url"] == "https://runbooks.example/offsetguard/offset_rewind.md"


def test_list_alerts_each_filter_selects_matching(client: TestClient) -> None:
    cases = {
        "kind=lag_high": ["al-odd", "al-lag"],
        "severity=critical": ["al-rewind"],
        "cluster=prod&topic=payments": ["al-odd"],
        "group=a/b": ["al-odd"],
        "group=orders-app&kind=lag_high": ["al-lag"],
        f"since={T0 + 25}": ["al-odd", "al-config"],
        "since=2023-11-14T22:13:45Z": ["al-odd", "al-config"],
        "status=resolved": [],
        "cluster=other": [],
    }
    for query, want in cases.items():
        assert _ids(client.get(f"/api/v1/alerts?{query}").json()) == want, query


def test_list_alerts_limit_cursor_pages_through_all(client: TestClient) -> None:
    seen, cursor = [], None
    for _ in range(3):
        url = "/api/v1/alerts?limit=2" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(url).json()
        seen += _ids(body)
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == ["al-odd", "al-config", "al-lag", "al-rewind"]
    assert cursor is None


def test_list_alerts_bad_filters_422_naming_parameter(client: TestClient) -> None:
    for query, parameter in (
        ("status=open", "status"),
        ("severity=loud", "severity"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("cursor=abc", "cursor"),
        ("since=yesterday", "since"),
    ):
        response = client.get(f"/api/v1/alerts?{query}")
        assert response.status_code == 422, query
        assert response.json()["error"] == "invalid_parameter"
        assert response.json()["parameter"] == parameter, query
        assert parameter in response.json()["message"]


def test_get_alert_known_id_has_history(client: TestClient) -> None:
    body = client.get("/api/v1/alerts/al-rewind").json()
    assert (body["kind"], body["severity"], body["group"]) == ("offset_rewind", "critical", "orders-app")
    assert [t["transition"] for t in body["transitions"]] == ["fired"]


def test_get_alert_unknown_id_404_json(client: TestClient) -> None:
    response = client.get("/api/v1/alerts/nope")
    assert response.status_code == 404
    assert response.json()["error"] == "alert_not_found"


def test_ack_alert_write_token_resolves_event_like_and_records_who(client: TestClient) -> None:
    response = client.post(
        "/api/v1/alerts/al-rewind/ack", json={"who": "bob", "comment": "replay expected"}, headers=WRITE
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["resolved_reason"]) == ("resolved", "acknowledged")
    assert (body["ack"]["by"], body["ack"]["comment"]) == ("bob", "replay expected")
    history = client.get("/api/v1/alerts/al-rewind").json()["transitions"]
    assert [t["transition"] for t in history] == ["fired", "acked", "resolved"]


def test_ack_alert_without_who_uses_token_name_and_state_like_keeps_firing(client: TestClient) -> None:
    body = client.post("/api/v1/alerts/al-lag/ack", json={}, headers=WRITE).json()
    assert (body["status"], body["ack"]["by"]) == ("firing", "alice")


def test_ack_alert_unknown_id_404(client: TestClient) -> None:
    response = client.post("/api/v1/alerts/nope/ack", json={"who": "bob"}, headers=WRITE)
    assert response.status_code == 404


def test_ack_alert_bad_body_422_naming_field(client: TestClient) -> None:
    response = client.post("/api/v1/alerts/al-lag/ack", json={"who": ""}, headers=WRITE)
    assert response.status_code == 422
    assert response.json()["parameter"] == "who"
