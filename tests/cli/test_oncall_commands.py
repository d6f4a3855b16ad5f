"""``offsetguard alerts | group | reset-plan`` against the app in-process (the HTTP seam is a function)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cli import alerts, group, reset_plan
from cli.main import build_parser, main
from service.api.client import ApiClient, ApiClientError, Send
from service.app import create_app
from tests.service.api.builders import NOW, READ_TOKEN, T0, build, settings_for


@pytest.fixture
def send(tmp_path: Path) -> Iterator[Send]:
    settings = settings_for(tmp_path, reads_require_auth=True)
    runtime = build(settings)
    with TestClient(create_app(settings, runtime_factory=lambda s: runtime, clock=lambda: NOW)) as client:

        def call(method: str, url: str, headers: Mapping[str, str]) -> tuple[int, Mapping[str, str], bytes]:
            response = client.request(method, url, headers=dict(headers))
            return response.status_code, dict(response.headers), response.content

        yield call


def _run(module: object, argv: list[str], send: Send) -> None:
    args = build_parser().parse_args([*argv, "--token", READ_TOKEN])
    assert module.run(args, send=send) == 0  # type: ignore[attr-defined]


def test_alerts_command_table_lists_firing_alerts(send: Send, capsys: pytest.CaptureFixture[str]) -> None:
    _run(alerts, ["alerts", "--cluster", "prod"], send)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "ID",
        "SEVERITY",
        "STATUS",
        "KIND",
        "CLUSTER",
        "GROUP",
        "WHERE",
        "STARTED",
        "SUMMARY",
    ]
    assert [line.split()[0] for line in lines[1:]] == ["al-odd", "al-config", "al-lag", "al-rewind"]
    assert "orders-0" in lines[4] and "2023-11-14T22:13:30.000Z" in lines[4]


def test_alerts_command_json_filters_pass_through(send: Send, capsys: pytest.CaptureFixture[str]) -> None:
    _run(alerts, ["alerts", "--json", "--severity", "critical"], send)
    assert [a["id"] for a in json.loads(capsys.readouterr().out)["alerts"]] == ["al-rewind"]


def test_alerts_command_token_from_environment(
    send: Send, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OFFSETGUARD_TOKEN", READ_TOKEN)
    assert alerts.run(build_parser().parse_args(["alerts", "--json"]), send=send) == 0
    assert json.loads(capsys.readouterr().out)["alerts"]


def test_alerts_command_without_token_refused_with_api_message(send: Send) -> None:
    with pytest.raises(ApiClientError) as caught:
        alerts.run(build_parser().parse_args(["alerts"]), send=send)
    assert (caught.value.status, caught.value.code) == (401, "unauthorized")


def test_group_command_table_odd_name_round_trips(send: Send, capsys: pytest.CaptureFixture[str]) -> None:
    _run(group, ["group", "prod", "a/b"], send)
    out = capsys.readouterr().out
    assert "group 'a/b' in cluster prod" in out
    assert out.splitlines()[4].split()[:7] == ["payments", "0", "12", "3", "10", "30", "18"]


def test_group_command_json_has_partitions(send: Send, capsys: pytest.CaptureFixture[str]) -> None:
    _run(group, ["group", "prod", "orders-app", "--json"], send)
    body = json.loads(capsys.readouterr().out)
    assert [p["committed_offset"] for p in body["partitions"]] == [150, 10]


def test_reset_plan_command_kafka_format_to_file_commands_on_stderr(
    send: Send, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "plan.csv"
    _run(
        reset_plan,
        ["reset-plan", "prod", "clampy", "--time", str(T0 + 30), "--format", "kafka", "--out", str(out)],
        send,
    )
    assert out.read_text() == "orders,0,200\norders,1,20\npayments,0,15\n"
    err = capsys.readouterr().err
    assert f"--group clampy --reset-offsets --from-file {out} --execute" in err
    assert "2 warning(s)" in err


def test_reset_plan_command_json_rows_with_warnings(send: Send, capsys: pytest.CaptureFixture[str]) -> None:
    _run(reset_plan, ["reset-plan", "prod", "clampy", "--time", str(T0 + 30), "--json"], send)
    body = json.loads(capsys.readouterr().out)
    assert body["warnings"] == 2
    assert [(r["topic"], r["partition"], r["offset"]) for r in body["offsets"]] == [
        ("orders", 0, 200),
        ("orders", 1, 20),
        ("payments", 0, 15),
    ]
    assert body["offsets"][1]["warning"].startswith("clamped to log start 20")


def test_main_unreachable_api_exit_2_with_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["alerts", "--url", "http://127.0.0.1:9"]) == 2
    assert "cannot reach the offsetguard API at http://127.0.0.1:9" in capsys.readouterr().err


def test_api_client_bad_url_refused() -> None:
    with pytest.raises(ApiClientError):
        ApiClient("ftp://x")
