import asyncio
import dataclasses
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from collectors.model import CommittedObservation, Failure
from service.app import create_app
from tests.service.api.builders import CLUSTER, HIDDEN_GROUP, NOW, ODD_GROUPS, T0, build, seg, settings_for

GROUPS = "/api/v1/clusters/prod/groups"


def test_get_group_known_group_state_members_and_partitions(client: TestClient) -> None:
    body = client.get(f"{GROUPS}/orders-app").json()
    assert (body["state"], body["type"], body["group_epoch"]) == ("Stable", "consumer", 7)
    assert [m["member_id"] for m in body["members"]] == ["m-1"]
    p0, p1 = body["partitions"]
    assert (p0["topic"], p0["partition"], p0["committed_offset"], p0["leader_epoch"]) == ("orders", 0, 150, 3)
    assert (p0["log_start"], p0["log_end"], p0["lag"], p0["lag_seconds"]) == (0, 200, 50, 60.0)
    assert (p0["last_commit_at"], p0["member_id"]) == (T0 + 60, "m-1")
    # orders-1: committed 10 below log start 20; its lag is still the distance to the log end
    assert (p1["committed_offset"], p1["log_start"], p1["lag"], p1["lag_seconds"]) == (10, 20, 70, 120.0)
    assert body["lag"] == {
        "partitions": 2,
        "lag_unknown": 0,
        "total_lag": 120,
        "max_lag": 70,
        "max_lag_seconds": 120.0,
    }


def test_get_group_committed_beyond_log_end_negative_lag_no_seconds(client: TestClient) -> None:
    rows = {(p["topic"], p["partition"]): p for p in client.get(f"{GROUPS}/clampy").json()["partitions"]}
    assert (rows["orders", 0]["lag"], rows["orders", 0]["lag_seconds"]) == (-50, None)
    assert (rows["orders", 2]["log_end"], rows["orders", 2]["lag"]) == (None, None)


def test_get_group_only_polled_state_no_partitions(client: TestClient) -> None:
    body = client.get(f"{GROUPS}/polled-only").json()
    assert (body["state"], body["partitions"]) == ("Empty", [])


def test_get_group_an_acl_hides_says_not_authorized_not_unknown(client: TestClient) -> None:
    response = client.get(f"{GROUPS}/{HIDDEN_GROUP}")
    assert response.status_code == 200
    body = response.json()
    assert body["unobserved"] == ["groups: not authorized", "committed: not authorized"]
    assert (body["state"], body["partitions"], body["lag"]["total_lag"]) == (None, [], None)
    assert client.get(f"{GROUPS}/orders-app").json()["unobserved"] == []


def test_get_group_topic_an_acl_hides_keeps_last_offsets_and_says_not_authorized(client: TestClient) -> None:
    """DESCRIBE on ``payments`` taken away: the poll cannot see clampy's offset on it (a ``topic``
    failure); the detail keeps the last value seen and says that topic is not seen now."""
    latest = client.app.state.runtime.latest  # type: ignore[attr-defined]
    poll = latest.get(CLUSTER, CommittedObservation)
    hidden = Failure("topic", "payments", "KafkaAuthError", "committed offsets not seen: not authorized")
    asyncio.run(latest.put(dataclasses.replace(poll, failures=(*poll.failures, hidden))))

    body = client.get(f"{GROUPS}/clampy").json()
    assert body["unobserved"] == ["committed: topic:payments: not authorized"]
    rows = {(p["topic"], p["partition"]): p["committed_offset"] for p in body["partitions"]}
    assert rows["payments", 0] == 15
    assert client.get(f"{GROUPS}/orders-app").json()["unobserved"] == []  # no offsets on that topic


def test_get_group_unknown_group_404(client: TestClient) -> None:
    response = client.get(f"{GROUPS}/nope")
    assert response.status_code == 404
    assert response.json()["error"] == "group_not_found"


def test_get_group_unknown_cluster_404(client: TestClient) -> None:
    response = client.get("/api/v1/clusters/nope/groups/orders-app")
    assert (response.status_code, response.json()["error"]) == (404, "cluster_not_found")


@pytest.mark.parametrize("name", ODD_GROUPS)
def test_group_routes_odd_group_name_round_trips(client: TestClient, name: str) -> None:
    base = f"{GROUPS}/{seg(name)}"
    detail = client.get(base)
    assert detail.status_code == 200, detail.text
    assert detail.json()["group"] == name
    assert detail.json()["partitions"][0]["committed_offset"] == 12
    history = client.get(f"{base}/history")
    assert (history.status_code, history.json()["group"]) == (200, name)
    offsets = client.get(f"{base}/offsets-at?time={T0 + 1}")
    assert [o["offset"] for o in offsets.json()["offsets"]] == [12]
    plan = client.get(f"{base}/reset-plan?time={T0 + 1}&format=kafka")
    assert plan.text == "payments,0,12\n"
    listed = client.get("/api/v1/alerts", params={"group": name}).json()["alerts"]
    assert all(a["group"] == name for a in listed)


def test_group_name_ending_in_history_not_confused_with_history_route(client: TestClient) -> None:
    assert client.get(f"{GROUPS}/x/history").status_code == 404  # the history of group "x": unknown
    assert client.get(f"{GROUPS}/{seg('x/history')}").json()["group"] == "x/history"


def test_list_groups_summaries_state_lag_and_worst_alert(client: TestClient) -> None:
    body = client.get(GROUPS).json()
    by_name = {g["group"]: g for g in body["groups"]}
    assert set(by_name) == {"orders-app", "clampy", "polled-only", *ODD_GROUPS}
    orders = by_name["orders-app"]
    assert (orders["state"], orders["members"], orders["lag"]["total_lag"]) == ("Stable", 1, 120)
    assert (orders["worst_alert"]["id"], orders["firing_alerts"]) == ("al-rewind", 2)
    assert by_name["a/b"]["worst_alert"]["id"] == "al-odd"
    assert by_name["clampy"]["worst_alert"] is None
    assert [g["group"] for g in body["groups"]] == sorted(by_name)


def test_list_groups_limit_cursor_pages_through_all(client: TestClient) -> None:
    names, cursor = [], None
    for _ in range(10):
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        body = client.get(GROUPS, params=params).json()
        names += [g["group"] for g in body["groups"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert names == sorted({"orders-app", "clampy", "polled-only", *ODD_GROUPS})


def test_list_groups_search_any_case_substring_pages_with_cursor(client: TestClient) -> None:
    first = client.get(GROUPS, params={"search": "P", "limit": 1}).json()
    assert [g["group"] for g in first["groups"]] == ["clampy"]
    rest = client.get(GROUPS, params={"search": "P", "cursor": first["next_cursor"]}).json()
    assert [g["group"] for g in rest["groups"]] == ["orders-app", "polled-only"]
    assert client.get(GROUPS, params={"search": "nothing-like-it"}).json()["groups"] == []
    assert client.get(GROUPS, params={"search": "x" * 201}).status_code == 422


def test_group_history_committed_and_log_points_over_time(client: TestClient) -> None:
    body = client.get(f"{GROUPS}/orders-app/history", params={"topic": "orders", "partition": 1}).json()
    [series] = body["partitions"]
    assert [(p["at"], p["offset"]) for p in series["committed"]] == [(T0, 50), (T0 + 60, 10)]
    assert [(p["at"], p["log_start"], p["log_end"]) for p in series["log"]] == [
        (T0, 0, 50),
        (T0 + 60, 20, 80),
    ]


def test_group_history_since_until_starts_with_state_as_of_since(client: TestClient) -> None:
    body = client.get(
        f"{GROUPS}/orders-app/history", params={"since": T0 + 30, "until": "2023-11-14T22:15:00Z"}
    ).json()
    series = {(s["topic"], s["partition"]): s for s in body["partitions"]}
    assert [(p["at"], p["offset"]) for p in series["orders", 0]["committed"]] == [(T0, 90), (T0 + 60, 150)]
    assert [p["at"] for p in series["orders", 0]["log"]] == [T0, T0 + 60]


def test_group_history_until_before_since_422(client: TestClient) -> None:
    response = client.get(f"{GROUPS}/orders-app/history", params={"since": T0 + 30, "until": T0})
    assert (response.status_code, response.json()["parameter"]) == (422, "until")


def test_offsets_at_before_rewind_returns_old_offsets(client: TestClient) -> None:
    body = client.get(f"{GROUPS}/orders-app/offsets-at", params={"time": "2023-11-14T22:13:50+00:00"}).json()
    assert [(o["topic"], o["partition"], o["offset"]) for o in body["offsets"]] == [
        ("orders", 0, 90),
        ("orders", 1, 50),
    ]
    assert body["time"] == T0 + 30


def test_offsets_at_before_any_commit_empty(client: TestClient) -> None:
    assert client.get(f"{GROUPS}/orders-app/offsets-at", params={"time": T0 - 1}).json()["offsets"] == []


@pytest.mark.parametrize(
    "bad", ["yesterday", "2023-11-14T22:13:50", "1700000000000", "2023-13-45T00:00:00Z", ""]
)
def test_offsets_at_malformed_time_422_naming_time(client: TestClient, bad: str) -> None:
    response = client.get(f"{GROUPS}/orders-app/offsets-at", params={"time": bad})
    assert response.status_code == 422
    assert (response.json()["error"], response.json()["parameter"]) == ("invalid_parameter", "time")


def test_offsets_at_missing_time_422_naming_time(client: TestClient) -> None:
    response = client.get(f"{GROUPS}/orders-app/offsets-at")
    assert (response.status_code, response.json()["parameter"]) == (422, "time")


def _scoped_client(tmp_path: Path, **scope: object) -> TestClient:
    settings = settings_for(tmp_path)
    cluster = settings.clusters[0].model_copy(update={k: v for k, v in scope.items()})
    settings = settings.model_copy(update={"clusters": [cluster]})
    runtime = build(settings)
    return TestClient(create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW))


def test_groups_history_from_before_the_scope_not_listed_and_its_detail_404(tmp_path: Path) -> None:
    from collectors.settings import NameFilter

    with _scoped_client(tmp_path, groups=NameFilter(exclude=["clam.*"])) as client:
        names = [g["group"] for g in client.get(f"/api/v1/clusters/{CLUSTER}/groups").json()["groups"]]
        detail = client.get(f"/api/v1/clusters/{CLUSTER}/groups/clampy")
        history = client.get(f"/api/v1/clusters/{CLUSTER}/groups/clampy/history")
    assert "clampy" not in names and "orders-app" in names
    assert detail.status_code == 404 and detail.json()["error"] == "group_out_of_scope"
    assert "excluded by the scope" in detail.json()["message"]
    assert history.status_code == 404


def test_groups_topics_from_before_the_scope_left_out_of_detail_and_history(tmp_path: Path) -> None:
    from collectors.settings import NameFilter

    with _scoped_client(tmp_path, topics=NameFilter(exclude=["pay.*"])) as client:
        detail = client.get(f"/api/v1/clusters/{CLUSTER}/groups/clampy").json()
        history = client.get(f"/api/v1/clusters/{CLUSTER}/groups/clampy/history").json()
        listed = client.get(f"/api/v1/clusters/{CLUSTER}/groups").text
    assert {p["topic"] for p in detail["partitions"]} == {"orders"}
    assert {s["topic"] for s in history["partitions"]} == {"orders"}
    assert "payments" not in listed
