"""cli/main.py: a command's module alone is imported for it; the whole parser otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import COMMANDS, build_parser, named_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["serve", "--config", "x.yaml"], "serve"),
        (["--log-level", "INFO", "sandbox", "start"], "sandbox"),
        (["--log-level=DEBUG", "reset-plan", "--help"], "reset-plan"),
        (["-h", "serve"], None),  # the top-level help, listing every command
        (["serv"], None),  # misspelt: the whole parser names the choices
        (["--log-level"], None),
        ([], None),
    ],
)
def test_named_command(argv: list[str], command: str | None) -> None:
    assert named_command(argv) == command


def test_the_whole_parser_has_every_command_and_one_command_alone_parses_as_in_it() -> None:
    whole = build_parser()
    sub = next(a for a in whole._actions if a.dest == "command")
    assert list(sub.choices or ()) == list(COMMANDS)
    argv = ["--log-level", "INFO", "serve", "--config", "x.yaml", "--port", "9000"]
    assert vars(build_parser("serve").parse_args(argv)) == vars(whole.parse_args(argv))


def test_serve_imports_no_other_command() -> None:
    # in a fresh interpreter: this one has imported every command already
    code = (
        "import json, sys\n"
        "from cli.main import COMMANDS, build_parser, named_command\n"
        "build_parser(named_command(['serve', '--help']))\n"
        "print(json.dumps([m for m in COMMANDS.values() if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == ["cli.serve"]


def test_serve_holds_no_http_client_library_until_a_notification_or_drill_needs_one() -> None:
    # httpx with its CLI's rich, pygments and click: ~6 MB resident a service without receivers never uses
    code = (
        "import json, sys\n"
        "import cli.serve, service.app, service.runtime, service.wiring\n"
        "print(json.dumps([m for m in ('httpx', 'rich', 'pygments', 'click') if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []
