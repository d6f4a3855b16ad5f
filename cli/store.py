"""``offsetguard store check``: check the store file before starting (read-only, safe beside a running
service). Exit 0: ok; 1: damaged (what SQLite found and the recovery are printed); 2: cannot be opened."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from service.settings import load_settings
from store.check import CORRUPT, OK, check
from store.opening import recovery


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("store", help="the store file: check it")
    commands = parser.add_subparsers(dest="store_command", required=True, metavar="COMMAND")
    checking = commands.add_parser(
        "check",
        help="run SQLite's integrity check on the store file (read-only): 0 ok, 1 damaged, 2 cannot open",
    )
    where = checking.add_mutually_exclusive_group()
    where.add_argument("--path", type=Path, help="the store file")
    where.add_argument(
        "--config", type=Path, help="YAML settings file: its store.path (default settings: none)"
    )
    checking.add_argument(
        "--quick",
        action="store_true",
        help="quick_check: faster on a large file, skips the index cross-checks",
    )
    checking.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    path = args.path if args.path is not None else load_settings(args.config).store.path
    result = check(path, quick=args.quick)
    if result.status == OK:
        print(f"{path}: ok ({result.check})")
        return 0
    if result.status == CORRUPT:
        print(f"{path}: damaged ({result.check} found {len(result.problems)} problem(s)):", file=sys.stderr)
        for line in result.problems:
            print(f"  {line}", file=sys.stderr)
        print(f"recovery: {recovery(path)}", file=sys.stderr)
        return 1
    print(f"{path}: cannot be opened: {'; '.join(result.problems)}", file=sys.stderr)
    return 2
