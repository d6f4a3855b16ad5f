"""``offsetguard store check``: check the store file before starting (read-only, safe beside a running
service). Exit 0: ok; 1: damaged (what SQLite found and the recovery are printed); 2: cannot be opened.

``offsetguard store backup DEST``: a consistent copy of the store file while the service runs (SQLite's
online backup, the WAL included). Exit 0: written; 2: not (the reason is printed).

Both are SQLite file tools: with ``store.url`` set (the store on PostgreSQL) they exit 2 and name
PostgreSQL's own (pg_amcheck, pg_dump)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from collectors.errors import StoreError
from service.settings import load_settings
from store.backup import backup
from store.check import CORRUPT, OK, check
from store.db import describe
from store.opening import recovery


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("store", help="the store file: check it, back it up")
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
    copying = commands.add_parser(
        "backup", help="copy the store file consistently while the service runs (SQLite's online backup)"
    )
    source = copying.add_mutually_exclusive_group()
    source.add_argument("--path", type=Path, help="the store file")
    source.add_argument("--config", type=Path, help="YAML settings file: its store.path")
    copying.add_argument("dest", type=Path, help="the new file to write (never overwritten)")
    copying.set_defaults(func=run_backup)


def _sqlite_path(args: argparse.Namespace, command: str) -> Path | None:
    """The store file to work on; None (and why, printed) when the settings put the store on PostgreSQL."""
    if args.path is not None:
        return Path(args.path)
    store = load_settings(args.config).store
    if store.url is None:
        return store.path
    instead = {
        "check": "check PostgreSQL with its own tools, e.g. pg_amcheck (indexes and heap) on the database",
        "backup": "back PostgreSQL up with its own tools, e.g. pg_dump --format=custom of the database",
    }[command]
    print(
        f"offsetguard: error: store {command} works on the SQLite store file; the store is on "
        f"{describe(store)} (store.url): {instead}",
        file=sys.stderr,
    )
    return None


def run_check(args: argparse.Namespace) -> int:
    path = _sqlite_path(args, "check")
    if path is None:
        return 2
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


def run_backup(args: argparse.Namespace) -> int:
    path = _sqlite_path(args, "backup")
    if path is None:
        return 2
    try:
        size = backup(path, args.dest)
    except StoreError as exc:
        print(f"offsetguard: error: {exc}", file=sys.stderr)
        return 2
    print(f"{path} -> {args.dest}: {size} bytes (check it: offsetguard store check --path {args.dest})")
    return 0
