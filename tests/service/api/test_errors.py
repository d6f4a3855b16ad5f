import pytest
from fastapi.testclient import TestClient

from service.api.errors import InvalidParameter
from service.api.paths import escape_segment, unescape
from service.api.times import parse_time
from service.app import create_app
from tests.service.api.builders import NOW, T0, build, settings_for


def test_unknown_endpoint_404_json_body(client: TestClient) -> None:
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_wrong_method_405_json_body(client: TestClient) -> None:
    response = client.delete("/api/v1/alerts")
    assert (response.status_code, response.json()["error"]) == (405, "method_not_allowed")


def test_malformed_json_body_422(client: TestClient) -> None:
    response = client.post(
        "/api/v1/alerts/al-lag/ack",
        content=b"{not json",
        headers={"Content-Type": "application/json", "Authorization": "Bearer write-token-0123456789"},
    )
    assert (response.status_code, response.json()["error"]) == (422, "invalid_parameter")


def test_alerts_disabled_503_names_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for(tmp_path)
    runtime = build(settings, alerts=False)
    with TestClient(create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)) as client:
        response = client.get("/api/v1/alerts")
        assert (response.status_code, response.json()["error"]) == (503, "alerts_unavailable")
        assert client.get("/api/v1/clusters/prod/groups").status_code == 200


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1700000000", T0),
        ("1700000000.25", T0 + 0.25),
        ("2023-11-14T22:13:20Z", T0),
        ("2023-11-14t22:13:20.5z", T0 + 0.5),
        ("2023-11-14T23:13:20+01:00", T0),
        ("2023-11-14T22:13:20.123456789Z", T0 + 0.123456),
    ],
)
def test_parse_time_rfc3339_and_epoch_seconds(text: str, seconds: float) -> None:
    assert parse_time(text, "time") == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize(
    "text", ["", "now", "2023-11-14", "2023-11-14T22:13:20", "1e9", "nan", "-5", "99999999999999"]
)
def test_parse_time_anything_else_invalid_parameter(text: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        parse_time(text, "since")
    assert caught.value.parameter == "since"


@pytest.mark.parametrize("name", ["a/b", "%2F", "%", "a%b/c", "ü.ñ", "😀", ".."])
def test_escape_segment_unescape_round_trip(name: str) -> None:
    from urllib.parse import quote

    escaped = escape_segment(quote(name, safe=""))
    assert "/" not in escaped
    assert unescape(escaped) == name
