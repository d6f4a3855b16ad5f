from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.notifications import NotificationStore
from tests.service.notify.builders import T0

WRITE_TOKEN = "write-token-0123456789"
READ_TOKEN = "read-token-0123456789"
WRITE = {"Authorization": f"Bearer {WRITE_TOKEN}"}
READ = {"Authorization": f"Bearer {READ_TOKEN}"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        store={"path": str(tmp_path / "og.db")},
        api={
            "tokens": [
                {"name": "oncall", "token": WRITE_TOKEN, "scopes": ["write"]},
                {"name": "viewer", "token": READ_TOKEN, "scopes": ["read"]},
            ]
        },
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    alerts = AlertStore.open(settings.store)
    notifications = NotificationStore.open(settings.store)
    runtime = Runtime(
        settings, store=None, latest=LatestObservations(), jobs=[], alerts=alerts, notifications=notifications
    )
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: T0)
    with TestClient(app) as test_client:
        yield test_client


def _body(**kw: Any) -> dict[str, Any]:
    return {
        "matchers": [
            {"name": "group", "op": "=~", "value": "billing-.*"},
            {"name": "cluster", "value": "prod"},
        ],
        "ends_at": "2023-11-14T23:13:20Z",
        "comment": "reprocessing on purpose",
        **kw,
    }


def test_create_silence_write_token_created_and_active(client: TestClient) -> None:
    response = client.post("/api/v1/silences", json=_body(), headers=WRITE)

    assert response.status_code == 201
    body = response.json()
    assert body["id"].startswith("si-")
    assert body["matchers"] == [
        {"name": "group", "op": "=~", "value": "billing-.*"},
        {"name": "cluster", "op": "=", "value": "prod"},
    ]
    assert (body["starts_at"], body["ends_at"], body["status"]) == (T0, T0 + 3600, "active")
    assert body["created_by"] == "oncall"  # the token's name when not given


def test_create_silence_created_by_given_kept(client: TestClient) -> None:
    response = client.post("/api/v1/silences", json=_body(created_by="alice"), headers=WRITE)

    assert response.json()["created_by"] == "alice"


@pytest.mark.parametrize(("headers", "status", "code"), [({}, 401, "unauthorized"), (READ, 403, "forbidden")])
def test_create_silence_without_write_scope_refused(
    client: TestClient, headers: dict[str, str], status: int, code: str
) -> None:
    response = client.post("/api/v1/silences", json=_body(), headers=headers)

    assert response.status_code == status
    assert response.json()["error"] == code
    assert client.get("/api/v1/silences").json() == {"silences": []}


@pytest.mark.parametrize(
    ("change", "parameter"),
    [
        ({"matchers": [{"name": "group", "op": "=~", "value": "(bad"}]}, "matchers.0.value"),
        ({"matchers": [{"name": "severity", "value": "critical"}]}, "matchers.0.name"),
        ({"matchers": []}, "matchers"),
        ({"ends_at": "2023-11-14T22:00:00Z"}, "ends_at"),  # before now
        ({"starts_at": T0 + 100, "ends_at": T0 + 50}, "ends_at"),
        ({"ends_at": "tomorrow"}, "ends_at"),
    ],
)
def test_create_silence_invalid_refused_naming_parameter(
    client: TestClient, change: dict[str, Any], parameter: str
) -> None:
    response = client.post("/api/v1/silences", json=_body(**change), headers=WRITE)

    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_parameter"
    assert body["parameter"] == parameter
    assert body["message"]


def test_list_silences_by_status(client: TestClient) -> None:
    active = client.post("/api/v1/silences", json=_body(), headers=WRITE).json()
    later = client.post("/api/v1/silences", json=_body(starts_at=T0 + 60), headers=WRITE).json()
    ended = client.post("/api/v1/silences", json=_body(), headers=WRITE).json()
    client.delete(f"/api/v1/silences/{ended['id']}", headers=WRITE)

    def ids(status: str) -> list[str]:
        return [s["id"] for s in client.get(f"/api/v1/silences?status={status}").json()["silences"]]

    assert ids("active") == [active["id"]]
    assert ids("pending") == [later["id"]]
    assert ids("expired") == [ended["id"]]
    assert len(client.get("/api/v1/silences").json()["silences"]) == 3


def test_delete_silence_expires_it_and_repeat_is_harmless(client: TestClient) -> None:
    created = client.post("/api/v1/silences", json=_body(), headers=WRITE).json()

    first = client.delete(f"/api/v1/silences/{created['id']}", headers=WRITE)
    second = client.delete(f"/api/v1/silences/{created['id']}", headers=WRITE)
    after = client.get(f"/api/v1/silences/{created['id']}").json()

    assert (first.status_code, second.status_code) == (204, 204)
    assert (after["status"], after["ends_at"]) == ("expired", T0)


def test_delete_silence_unknown_not_found(client: TestClient) -> None:
    response = client.delete("/api/v1/silences/si-nope", headers=WRITE)

    assert response.status_code == 404
    assert response.json()["error"] == "silence_not_found"


def test_delete_silence_read_token_forbidden(client: TestClient) -> None:
    created = client.post("/api/v1/silences", json=_body(), headers=WRITE).json()

    response = client.delete(f"/api/v1/silences/{created['id']}", headers=READ)

    assert response.status_code == 403
    assert client.get(f"/api/v1/silences/{created['id']}").json()["status"] == "active"


def test_silences_notifications_disabled_unavailable(settings: Settings) -> None:
    runtime = Runtime(settings, store=None, latest=LatestObservations(), jobs=[])
    app = create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: T0)
    with TestClient(app) as client:
        response = client.get("/api/v1/silences")

    assert response.status_code == 503
    assert response.json()["error"] == "notifications_unavailable"
