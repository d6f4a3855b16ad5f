"""``offsetguard dump``: snapshot one group's ``__consumer_offsets`` partition into a snapshot directory.

The snapshot is written by :func:`collectors.snapshots.dump.dump_group` (the same function the detection
side calls with an alert id as trigger) and indexed in the store unless ``--no-index``. Progress goes to
stderr, at most a few times a second; the result goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from collectors.errors import ConfigError
from collectors.settings import ClusterSettings
from collectors.snapshots import SnapshotResult
from collectors.snapshots.dump import dump_group
from service.settings import Settings, load_settings


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "dump", help="snapshot a group's __consumer_offsets partition (records, folded state, manifest)"
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--cluster", help="name of a cluster in --config (uses its security settings)")
    target.add_argument("--bootstrap", help="bootstrap servers, host:port[,host:port...] (PLAINTEXT)")
    parser.add_argument("--group", required=True, help="consumer group whose partition to snapshot")
    parser.add_argument("--out", type=Path, help="snapshot directory (default: snapshots.directory)")
    parser.add_argument("--config", type=Path, help="YAML settings file")
    parser.add_argument("--name", default="adhoc", help="cluster name recorded with --bootstrap")
    parser.add_argument("--trigger", default="manual", help="why: 'manual' or an alert id")
    parser.add_argument("--no-index", action="store_true", help="do not index the snapshot in the store")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def _settings(args: argparse.Namespace) -> tuple[Settings, ClusterSettings]:
    if args.cluster:
        settings = load_settings(args.config)
        cluster = settings.cluster(args.cluster)
        if cluster is None:
            raise ConfigError(f"no cluster named {args.cluster!r} in the configuration", field="cluster")
        return settings, cluster
    settings = load_settings(args.config, clusters=[{"name": args.name, "bootstrap_servers": args.bootstrap}])
    return settings, settings.clusters[0]


class ProgressLine:
    """Prints ``done/total`` offsets on one stderr line, at most every ``every`` seconds (and at the end)."""

    def __init__(self, stream: TextIO, *, every: float = 0.5, clock: Any = time.monotonic) -> None:
        self._stream = stream
        self._every = every
        self._clock = clock
        self._last: float | None = None
        self.printed = 0

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        final = done >= total
        if not final and self._last is not None and now - self._last < self._every:
            return
        self._last = now
        percent = 100.0 if total == 0 else 100.0 * done / total
        self._stream.write(f"\rdump: {done}/{total} offsets read ({percent:.0f}%)")
        if final:
            self._stream.write("\n")
        self._stream.flush()
        self.printed += 1


def summary(result: SnapshotResult) -> dict[str, Any]:
    """The JSON-ready result of one dump."""
    info = result.info
    return {
        "id": info.id,
        "path": info.path,
        "cluster": info.cluster,
        "group": info.group,
        "partition": info.partition,
        "log_start": result.log_start,
        "first_offset": info.first_offset,
        "last_offset": info.last_offset,
        "end_offset": result.end_offset,
        "counts": result.counts.as_dict(),
        "bytes": info.bytes,
        "truncated": info.truncated,
        "manifest_sha256": info.manifest_sha256,
        "deleted": list(result.deleted),
    }


def run(args: argparse.Namespace) -> int:
    settings, cluster = _settings(args)
    progress = None if args.quiet else ProgressLine(sys.stderr)
    store = None
    if not args.no_index:
        from store import Store

        store = Store.open(settings.store)
    try:
        result = dump_group(
            cluster,
            args.group,
            settings.snapshots,
            trigger=args.trigger,
            index=store,
            progress=progress,
            directory=args.out,
        )
    finally:
        if store is not None:
            store.close()
    out = summary(result)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        c = result.counts
        print(
            f"snapshot {out['id']} of group {out['group']!r}: __consumer_offsets-{out['partition']} "
            f"offsets {out['first_offset']}..{out['last_offset']} (end {out['end_offset']}), "
            f"{c.total} records ({c.commits} commits, {c.tombstones} tombstones, {c.group_records} group, "
            f"{c.unknown} unknown, {c.decode_errors} undecodable)"
            + (" TRUNCATED at snapshots.max_bytes" if out["truncated"] else "")
        )
        print(out["path"])
    return 0
