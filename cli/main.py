"""``offsetguard`` command line: one sub-command module per concern, registered here."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from collectors.errors import OffsetguardError


def build_parser() -> argparse.ArgumentParser:
    from cli import alerts, collect, config, drill, dump, group, pipeline, reset_plan, serve, store
    from sandbox import cli as sandbox_cli

    parser = argparse.ArgumentParser(prog="offsetguard", description="Kafka consumer offset-safety monitor")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="(serve: the settings' log_level, log_format and access_log instead)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sandbox_cli.register(sub)
    collect.register(sub)
    serve.register(sub)
    config.register(sub)
    dump.register(sub)
    alerts.register(sub)
    group.register(sub)
    reset_plan.register(sub)
    pipeline.register(sub)
    drill.register(sub)
    store.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
