"""``offsetguard`` command line: one sub-command module per concern, registered here."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from collectors.errors import OffsetguardError

# Each command and the module that registers it (its ``register(sub)``), in the order --help lists them.
COMMANDS = {
    "sandbox": "sandbox.cli",
    "collect": "cli.collect",
    "serve": "cli.serve",
    "config": "cli.config",
    "dump": "cli.dump",
    "alerts": "cli.alerts",
    "group": "cli.group",
    "reset-plan": "cli.reset_plan",
    "pipeline": "cli.pipeline",
    "drill": "cli.drill",
    "store": "cli.store",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given a ``command`` (one of :data:`COMMANDS`), that one alone, so that only
    its module is imported (``offsetguard serve`` then starts without the other commands' ~0.3 s of
    imports)."""
    parser = argparse.ArgumentParser(prog="offsetguard", description="Kafka consumer offset-safety monitor")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="(serve: the settings' log_level, log_format and access_log instead)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(module).register(sub)
    return parser


def named_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word after the top-level options), if one of
    :data:`COMMANDS`; else None (no command, a top-level --help, a misspelt one, an option spelt otherwise
    than ``--log-level LEVEL``: the whole parser, which says what is wrong)."""
    words = iter(argv)
    for word in words:
        if word == "--log-level":
            next(words, None)
        elif word in ("-h", "--help"):
            return None
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(named_command(argv))
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except OffsetguardError as exc:
        print(f"offsetguard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
