"""A throwaway certificate authority for a secured sandbox: one CA, a server certificate every node uses
(subject alternative names ``127.0.0.1`` and ``localhost``: clients check the host name) and one client
certificate per principal, all PEM in ``DIR/pki``.

Kafka reads PEM key stores directly (KIP-651, ``ssl.keystore.type=PEM``): ``server.pem`` holds the
server's unencrypted PKCS#8 key followed by its certificate; ``ca.pem`` is every side's trust store.
Clients (kafka-python, aiokafka, the JVM tools) get ``<principal>.crt`` / ``<principal>.key``; the
certificate's subject is ``CN=<principal>``, which the brokers map to ``User:<principal>``.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from sandbox.config import HOST

VALID_DAYS = 30  # a sandbox lives for a test session or a demo; re-created by every `sandbox up`


@dataclass(frozen=True, slots=True)
class Pki:
    """Where the files of :func:`create` are."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def server(self) -> Path:
        return self.directory / "server.pem"

    def cert(self, principal: str) -> Path:
        return self.directory / f"{principal}.crt"

    def key(self, principal: str) -> Path:
        return self.directory / f"{principal}.key"


def create(directory: Path, principals: tuple[str, ...]) -> Pki:
    """A new CA, the server certificate and a client certificate for each of ``principals``."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory)
    ca_key = _new_key()
    ca_name = _name("offsetguard-sandbox-ca")
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(*_usage(cert_sign=True)), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pki.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    server_key = _new_key()
    names = [x509.IPAddress(ipaddress.ip_address(HOST)), x509.DNSName("localhost")]
    server = (
        _builder(_name("sandbox-broker"), ca_name, server_key.public_key())
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    write_private(pki.server, _pkcs8(server_key) + server.public_bytes(serialization.Encoding.PEM))

    for principal in principals:
        key = _new_key()
        cert = (
            _builder(_name(principal), ca_name, key.public_key())
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        pki.cert(principal).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_private(pki.key(principal), _pkcs8(key))
    return pki


def _new_key() -> rsa.RSAPrivateKey:
    """RSA 2048: what every Kafka version's PEM key store reads (KIP-651) and every client accepts."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key: rsa.RSAPublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
    )


def _usage(*, cert_sign: bool) -> tuple[bool, ...]:
    """KeyUsage flags in its constructor's order: digital_signature, content_commitment, key_encipherment,
    data_encipherment, key_agreement, key_cert_sign, crl_sign, encipher_only, decipher_only."""
    return (True, False, False, False, False, cert_sign, cert_sign, False, False)


def _pkcs8(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def write_private(path: Path, data: bytes) -> None:
    path.touch(mode=0o600)
    path.write_bytes(data)
