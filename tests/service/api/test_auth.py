from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from collectors.errors import ConfigError
from service.api.auth import match_token
from service.app import create_app
from service.settings import ApiToken, load_settings
from tests.service.api.builders import NOW, READ_TOKEN, WRITE_TOKEN, build, settings_for

READ = {"Authorization": f"Bearer {READ_TOKEN}"}
WRITE = {"Authorization": f"Bearer {WRITE_TOKEN}"}
READS = ("/api/v1/alerts", "/api/v1/clusters", "/api/v1/clusters/prod/groups/orders-app", "/api/v1/snapshots")


def _client(tmp: Path, **api: object) -> TestClient:
    settings = settings_for(tmp, **api)
    runtime = build(settings)
    return TestClient(create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW))


def test_reads_open_by_default_without_token(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        for path in READS:
            assert client.get(path).status_code == 200, path


def test_reads_required_no_token_401_with_challenge(tmp_path: Path) -> None:
    with _client(tmp_path, reads_require_auth=True) as client:
        for path in READS:
            response = client.get(path)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.json()["error"] == "unauthorized"


def test_reads_required_read_or_write_token_allowed(tmp_path: Path) -> None:
    with _client(tmp_path, reads_require_auth=True) as client:
        for headers in (READ, WRITE):
            assert all(client.get(p, headers=headers).status_code == 200 for p in READS)


def test_unknown_token_401_even_on_open_reads(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        response = client.get("/api/v1/alerts", headers={"Authorization": "Bearer not-a-token-at-all"})
        assert response.status_code == 401


def test_mutations_need_write_scope(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        ack = "/api/v1/alerts/al-lag/ack"
        assert client.post(ack, json={"who": "x"}).status_code == 401
        assert client.post(ack, json={"who": "x"}, headers={"Authorization": "Basic abc"}).status_code == 401
        forbidden = client.post(ack, json={"who": "x"}, headers=READ)
        assert (forbidden.status_code, forbidden.json()["error"]) == (403, "forbidden")
        assert client.get("/api/v1/alerts/al-lag").json()["ack"] is None  # nothing was written
        assert client.post(ack, json={"who": "x"}, headers=WRITE).status_code == 200


def test_auth_refusal_comes_before_404(tmp_path: Path) -> None:
    with _client(tmp_path, reads_require_auth=True) as client:
        assert client.get("/api/v1/clusters/nope/groups/x").status_code == 401


def test_token_never_in_error_messages_or_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _client(tmp_path) as client:
        text = client.post("/api/v1/alerts/al-lag/ack", json={}, headers=READ).text
        text += client.get("/api/v1/alerts", headers={"Authorization": "Bearer wrong-token-123456"}).text
    assert READ_TOKEN not in text and "wrong-token-123456" not in text
    assert READ_TOKEN not in caplog.text and "wrong-token-123456" not in caplog.text
    assert "reader" in caplog.text  # the token's name is what gets logged


def test_match_token_compares_every_token_returns_the_equal_one() -> None:
    tokens = [ApiToken(name=n, token=t) for n, t in (("a", "a" * 16), ("b", "b" * 16))]  # type: ignore[arg-type]
    assert match_token(tokens, "b" * 16) is tokens[1]
    assert match_token(tokens, "b" * 15) is None
    assert match_token(tokens, "ü" * 16) is None


def test_api_settings_unsafe_values_refused_at_start() -> None:
    for api in (
        {"tokens": [{"name": "a", "token": "short"}]},
        {"reads_require_auth": True},
        {"tokens": [{"name": "a", "token": "x" * 16}, {"name": "a", "token": "y" * 16}]},
        {"tokens": [{"name": "a", "token": "x" * 16}, {"name": "b", "token": "x" * 16}]},
        {"tokens": [{"name": "a", "token": "x" * 16, "scopes": ["admin"]}]},
    ):
        with pytest.raises(ConfigError):
            load_settings(api=api)
