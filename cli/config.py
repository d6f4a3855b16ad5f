"""``offsetguard config check FILE [--connect]``: is this config what ``serve`` will accept, and may it see
what it needs?

It validates ``FILE`` (and the ``OFFSETGUARD_*`` environment) exactly as ``serve`` does and prints the
effective settings as YAML, defaults filled in and secrets redacted. With ``--connect`` it also connects to
each cluster with that cluster's security settings and says, per ACL offsetguard needs
(:data:`collectors.acls.GRANTS`), whether Kafka's authorizer grants it, with the ``kafka-acls.sh`` line
for each one missing.

Exit codes, for CI: 0 valid (and, with ``--connect``, every cluster reached with every grant); 1 the config
is invalid; 3 valid, but a cluster could not be reached or lacks a grant.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import yaml

from collectors.acls import kafka_acls_commands
from collectors.errors import ConfigError, KafkaError
from collectors.kafka.authorized import Authorized, check
from collectors.kafka.seam import client_kwargs
from collectors.settings import ClusterSettings
from service.settings import Settings, load_settings

INVALID = 1
UNREACHABLE_OR_UNAUTHORIZED = 3
REDACTED = "<redacted>"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("config", help="check a configuration file")
    commands = parser.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    checker = commands.add_parser(
        "check",
        help="validate FILE as serve would, print the effective settings (secrets redacted)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    checker.add_argument("file", type=Path, help="the YAML settings file")
    checker.add_argument(
        "--connect", action="store_true", help="also connect to each cluster and check offsetguard's ACLs"
    )
    checker.add_argument("--quiet", action="store_true", help="do not print the effective settings")
    checker.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        settings = load_settings(args.file)
    except ConfigError as exc:
        print(f"{args.file}: invalid: {exc}", file=err)
        return INVALID
    print(f"{args.file}: valid ({len(settings.clusters)} clusters)", file=err)
    if not args.quiet:
        out.write(yaml.safe_dump(effective(settings), sort_keys=False))
    if not args.connect:
        return 0
    failed = False
    for cluster in settings.clusters:
        try:
            authorized = check(client_kwargs(cluster, "offsetguard-config-check"), cluster.name)
        except KafkaError as exc:
            print(f"cluster {cluster.name}: cannot connect: {exc}", file=err)
            failed = True
            continue
        err.write(report(cluster, authorized))
        failed = failed or bool(authorized.missing)
    return UNREACHABLE_OR_UNAUTHORIZED if failed else 0


def effective(settings: Settings) -> dict[str, Any]:
    """The settings as plain data, every default filled in; secrets (passwords, tokens, receiver headers)
    and anything a URL carries beyond its scheme, host, port and path (credentials, a query) redacted."""
    data: dict[str, Any] = settings.model_dump(mode="json")  # SecretStr dumps as "**********"
    for receivers in (data.get("notify") or {}).values():
        if isinstance(receivers, list):
            for receiver in receivers:
                if isinstance(receiver, dict) and isinstance(receiver.get("url"), str):
                    receiver["url"] = _url(receiver["url"])
    for cluster in data.get("clusters", []):
        cluster["metrics_urls"] = [_url(u) for u in cluster.get("metrics_urls", [])]
    store = data.get("store") or {}
    if isinstance(store.get("url"), str):  # store.url's password (store.password is a SecretStr)
        store["url"] = _url(store["url"])
    return data


def _url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{REDACTED}@" if (parts.username or parts.password) else ""
    netloc += f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = f"?{REDACTED}" if parts.query else ""
    return f"{parts.scheme}://{netloc}{parts.path}{query}"


def report(cluster: ClusterSettings, authorized: Authorized) -> str:
    """Per grant, granted or missing, and how to grant what is missing."""
    principal = f"User:{cluster.sasl.username}" if cluster.sasl is not None else "<its principal>"
    lines = [
        f"cluster {cluster.name}: connected ({authorized.brokers} brokers, {authorized.topics_visible} topics"
        f" visible) as {principal}"
    ]
    for c in authorized.checks:
        g = c.grant
        where = f"{g.resource} {g.name} {g.operation}"
        lines.append(f"  {'ok' if c.state == 'granted' else 'MISSING':<8}{where:<40}{', '.join(g.features)}")
        if c.detail:
            lines.append(f"          {c.detail}")
    if authorized.missing:
        bootstrap = ",".join(cluster.bootstrap_servers)
        lines.append("  grant what is missing with (an admin's credentials in admin.properties):")
        every = kafka_acls_commands(principal, bootstrap)
        order = [(g.resource, g.name, g.operation) for g in (c.grant for c in authorized.checks)]
        missing = {(c.grant.resource, c.grant.name, c.grant.operation) for c in authorized.missing}
        lines += [f"    {line}" for key, line in zip(order, every, strict=True) if key in missing]
    return "\n".join(lines) + "\n"
