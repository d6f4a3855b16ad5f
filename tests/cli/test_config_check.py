"""``offsetguard config check FILE``: validated as serve does it, settings printed redacted, exit codes."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from cli.main import main

SECRET = "s3cr3t-password-never-printed"
TOKEN = "t0ken-value-long-enough-never-printed"


def _write(tmp_path: Path, config: Mapping[str, object]) -> Path:
    path = tmp_path / "offsetguard.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _config(bootstrap: str = "127.0.0.1:9092") -> dict[str, object]:
    return {
        "clusters": [
            {
                "name": "prod",
                "bootstrap_servers": [bootstrap],
                "security_protocol": "SASL_PLAINTEXT",
                "sasl": {"mechanism": "SCRAM-SHA-512", "username": "offsetguard", "password": SECRET},
                "metrics_urls": ["http://jmx:pw@broker-1:7071/metrics?key=abc"],
            }
        ],
        "api": {"tokens": [{"name": "oncall", "token": TOKEN, "scopes": ["write"]}]},
        "notify": {
            "receivers": [
                {
                    "name": "hook",
                    "type": "webhook",
                    "url": "https://hooks.example.com/services/T0/B0?token=xyz",
                    "headers": {"Authorization": f"Bearer {TOKEN}"},
                }
            ]
        },
    }


def test_valid_config_prints_effective_settings_with_secrets_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "check", str(_write(tmp_path, _config()))]) == 0
    out, err = capsys.readouterr()
    assert "valid (1 clusters)" in err
    assert SECRET not in out + err and TOKEN not in out + err
    printed = yaml.safe_load(out)
    cluster = printed["clusters"][0]
    assert cluster["sasl"]["password"] == "**********"
    assert cluster["request_timeout_ms"] == 10_000  # defaults filled in
    assert cluster["metrics_urls"] == ["http://<redacted>@broker-1:7071/metrics?<redacted>"]
    [receiver] = printed["notify"]["receivers"]
    assert receiver["url"] == "https://hooks.example.com/services/T0/B0?<redacted>"
    assert receiver["headers"] == {"Authorization": "**********"}
    assert printed["api"]["tokens"][0]["token"] == "**********"
    assert printed["intervals"]["offsets"] > 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"clusters": [{"name": "a b", "bootstrap_servers": ["h:1"]}]}, "clusters.0.name"),
        ({"intervals": {"offsets": -1}}, "intervals.offsets"),
        ({"unknown_key": 1}, "unknown_key"),
    ],
)
def test_invalid_config_exit_1_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], field: str
) -> None:
    assert main(["config", "check", str(_write(tmp_path, change))]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "invalid" in err and field in err


def test_unreadable_file_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check", str(tmp_path / "absent.yaml")]) == 1
    assert "cannot read config file" in capsys.readouterr().err


def test_connect_to_nothing_listening_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = {
        "clusters": [{"name": "gone", "bootstrap_servers": [f"127.0.0.1:{port}"], "request_timeout_ms": 2000}]
    }
    assert main(["config", "check", "--quiet", "--connect", str(_write(tmp_path, config))]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert "cluster gone: cannot connect" in err
