"""A secured sandbox (``sandbox up --security sasl_ssl|mtls``): what the nodes, the storage format and the
clients need.

Clients reach the brokers on the ``CLIENT`` listener only, secured:

- ``sasl_ssl``: SASL_SSL with SCRAM-SHA-512; the users and their passwords are created when the storage
  is formatted (``--add-scram``), so nothing can connect before they exist;
- ``mtls``: SSL with ``ssl.client.auth=required``; a client certificate ``CN=<name>`` is ``User:<name>``.

Brokers talk to each other on an ``INTERNAL`` PLAINTEXT listener and to the controller on ``CONTROLLER``
(PLAINTEXT): both unauthenticated, so their principal, ``User:ANONYMOUS``, is a super user next to
``User:admin``. Only loopback listens (like every sandbox port), and no client is given those ports; the
sandbox's own readiness checks use ``INTERNAL``. The StandardAuthorizer runs on every node: anyone else
needs ACLs: ``offsetguard`` is granted exactly :data:`collectors.acls.GRANTS` at start, read-only
(``allow.everyone.if.no.acl.found`` stays false).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors import acls
from collectors.kafka import admin
from sandbox import pki
from sandbox.config import HOST, SECURITY_MODES, SecurityMode

Mode = SecurityMode
MODES = SECURITY_MODES
ADMIN = "admin"  # the super user the sandbox and the tests set up with
MONITOR = "offsetguard"  # the principal offsetguard connects as: only the ACLs it is granted
PRINCIPALS = (ADMIN, MONITOR)
SCRAM = "SCRAM-SHA-512"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@dataclass(frozen=True)
class Security:
    """A secured sandbox's mode, client passwords (``sasl_ssl``) and certificates."""

    mode: Mode
    pki_dir: Path
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def pki(self) -> pki.Pki:
        return pki.Pki(self.pki_dir)

    @property
    def client_protocol(self) -> str:
        return "SASL_SSL" if self.mode == "sasl_ssl" else "SSL"

    def password_file(self, principal: str) -> Path:
        """Where ``principal``'s SCRAM password is kept (mode 0600), as a mounted Secret would be."""
        return self.pki_dir / f"{principal}.password"

    def describe(self) -> dict[str, Any]:
        """What ``sandbox.json`` keeps: the mode and where the files are (passwords stay in their files)."""
        return {"mode": self.mode, "pki_dir": str(self.pki_dir)}

    @classmethod
    def from_state(cls, raw: dict[str, Any] | None) -> Security | None:
        if not raw:
            return None
        found = cls(raw["mode"], Path(raw["pki_dir"]))
        if found.mode == "sasl_ssl":
            for principal in PRINCIPALS:
                text = found.password_file(principal).read_text(encoding="utf-8")
                found.passwords[principal] = text.removesuffix("\n")
        return found


def prepare(mode: Mode, directory: Path) -> Security | None:
    """Certificates (and SCRAM passwords for ``sasl_ssl``) in ``directory/pki``; None for plaintext."""
    if mode == "plaintext":
        return None
    made = pki.create(directory / "pki", PRINCIPALS)
    passwords = {p: secrets.token_urlsafe(18) for p in PRINCIPALS} if mode == "sasl_ssl" else {}
    secured = Security(mode, made.directory, passwords)
    for principal, password in passwords.items():
        pki.write_private(secured.password_file(principal), f"{password}\n".encode())
    return secured


def node_properties(
    security: Security, *, is_broker: bool, client_port: int | None, internal_port: int | None
) -> dict[str, object]:
    """Listener, TLS, SASL and authorizer settings of one node (a controller-only node has no listener of
    its own besides CONTROLLER, but runs the authorizer too)."""
    props: dict[str, object] = {
        "authorizer.class.name": AUTHORIZER,
        "super.users": f"User:{ADMIN};User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
        "listener.security.protocol.map": (
            f"CLIENT:{security.client_protocol},INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
        ),
    }
    if not is_broker:
        return props
    props.update(
        {
            "advertised.listeners": f"CLIENT://{HOST}:{client_port},INTERNAL://{HOST}:{internal_port}",
            "inter.broker.listener.name": "INTERNAL",
            "listener.name.client.ssl.keystore.type": "PEM",
            "listener.name.client.ssl.keystore.location": security.pki.server,
            "listener.name.client.ssl.truststore.type": "PEM",
            "listener.name.client.ssl.truststore.location": security.pki.ca,
        }
    )
    if security.mode == "mtls":
        props["listener.name.client.ssl.client.auth"] = "required"
        # CN=offsetguard -> User:offsetguard (the default keeps the whole DN)
        props["ssl.principal.mapping.rules"] = "RULE:^CN=([A-Za-z0-9._-]+)$/$1/,DEFAULT"
    else:
        props["listener.name.client.sasl.enabled.mechanisms"] = SCRAM
        props[f"listener.name.client.{SCRAM.lower()}.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        )
    return props


def format_args(security: Security | None) -> list[str]:
    """``StorageTool format`` arguments creating the SCRAM users (``sasl_ssl``)."""
    if security is None or security.mode != "sasl_ssl":
        return []
    return [
        arg
        for user, password in sorted(security.passwords.items())
        for arg in ("--add-scram", f"{SCRAM}=[name={user},password={password}]")
    ]


def client_settings(security: Security | None, principal: str = MONITOR) -> dict[str, Any]:
    """The ``ClusterSettings`` security fields for ``principal`` (empty for plaintext); the password is
    given by its file, never in clear."""
    if security is None:
        return {}
    tls: dict[str, Any] = {"cafile": str(security.pki.ca)}
    out: dict[str, Any] = {"security_protocol": security.client_protocol, "tls": tls}
    if security.mode == "mtls":
        tls.update(certfile=str(security.pki.cert(principal)), keyfile=str(security.pki.key(principal)))
    else:
        out["sasl"] = {
            "mechanism": SCRAM,
            "username": principal,
            "password_file": str(security.password_file(principal)),
        }
    return out


def kafka_python_config(security: Security | None, principal: str = ADMIN) -> dict[str, Any]:
    """kafka-python client keyword arguments for ``principal`` (the super user by default)."""
    if security is None:
        return {}
    out: dict[str, Any] = {"security_protocol": security.client_protocol, "ssl_cafile": str(security.pki.ca)}
    if security.mode == "mtls":
        out.update(
            ssl_certfile=str(security.pki.cert(principal)), ssl_keyfile=str(security.pki.key(principal))
        )
    else:
        out.update(
            sasl_mechanism=SCRAM,
            sasl_plain_username=principal,
            sasl_plain_password=security.passwords[principal],
        )
    return out


def grant(servers: str, principal: str, grants: Iterable[acls.Grant], timeout: float = 60.0) -> None:
    """Create ``grants`` for ``principal`` through the INTERNAL listener (the super user ANONYMOUS)."""
    failed = admin.create_acls(servers, principal, grants, timeout)
    if failed:
        raise RuntimeError(f"ACLs refused: {failed}")
