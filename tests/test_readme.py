"""The README's promises stay true: its example configuration loads and its commands exist."""

import os
import re
from pathlib import Path

import pytest

from cli.main import build_parser
from service.settings import load_settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_config_loads_every_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("OFFSETGUARD_")]:
        monkeypatch.delenv(name)
    block = re.search(r"```yaml\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    secret = tmp_path / "sasl-password"  # a mounted Secret stands where the example reads it
    secret.write_text("from-the-secret\n")
    config = tmp_path / "offsetguard.yaml"
    assert "/etc/offsetguard/sasl-password" in block.group(1)
    config.write_text(block.group(1).replace("/etc/offsetguard/sasl-password", str(secret)))
    settings = load_settings(config)
    assert [c.name for c in settings.clusters] == ["prod"]
    sasl = settings.clusters[0].sasl
    assert sasl is not None and sasl.password.get_secret_value() == "from-the-secret"
    assert len(settings.api.tokens) == 2
    assert len(settings.notify.receivers) == 2
    assert settings.metrics.granularity == "partition"
    assert settings.metrics.families == ["offsetguard", "kafka_exporter"]


def test_readme_commands_exist_in_the_cli() -> None:
    commands = set(re.findall(r"`offsetguard ([a-z-]+)", README.read_text()))
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert commands <= set(sub.choices), commands - set(sub.choices)  # type: ignore[attr-defined]
