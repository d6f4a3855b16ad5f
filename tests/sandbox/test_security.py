import ssl
from pathlib import Path

import pytest
from cryptography import x509

from collectors.settings import ClusterSettings
from sandbox import config, pki, security
from sandbox.config import HOST, render_properties
from sandbox.node import SandboxNode, read_security, read_state, write_state


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> pki.Pki:
    return pki.create(tmp_path_factory.mktemp("pki"), security.PRINCIPALS)


def test_pki_server_certificate_for_loopback_signed_by_the_ca(made: pki.Pki) -> None:
    ca = x509.load_pem_x509_certificate(made.ca.read_bytes())
    server = x509.load_pem_x509_certificate(made.server.read_bytes())  # after the key in the same file
    server.verify_directly_issued_by(ca)
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == [HOST]
    assert made.server.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8, as Kafka wants
    assert made.server.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("principal", security.PRINCIPALS)
def test_pki_client_certificate_cn_is_the_principal_and_its_key_matches(
    made: pki.Pki, principal: str
) -> None:
    cert = x509.load_pem_x509_certificate(made.cert(principal).read_bytes())
    assert cert.subject.rfc4514_string() == f"CN={principal}"
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(made.ca.read_bytes()))
    context = ssl.create_default_context(cafile=str(made.ca))
    context.load_cert_chain(made.cert(principal), made.key(principal))  # raises when they do not match


def test_prepare_plaintext_is_none_sasl_ssl_has_passwords_mtls_none(tmp_path: Path) -> None:
    assert security.prepare("plaintext", tmp_path / "p") is None
    sasl = security.prepare("sasl_ssl", tmp_path / "s")
    mtls = security.prepare("mtls", tmp_path / "m")
    assert sasl is not None and mtls is not None
    assert set(sasl.passwords) == set(security.PRINCIPALS) and mtls.passwords == {}
    for principal, password in sasl.passwords.items():  # kept 0600, as a mounted Secret
        kept = sasl.password_file(principal)
        assert kept.read_text() == f"{password}\n" and kept.stat().st_mode & 0o077 == 0
    assert (sasl.client_protocol, mtls.client_protocol) == ("SASL_SSL", "SSL")


def _secured_properties(sec: security.Security, node: config.NodeSpec) -> dict[str, str]:
    text = render_properties(
        node,
        voters="100@127.0.0.1:1",
        data_dir=Path("/tmp/d"),
        broker_count=3,
        offsets_partitions=10,
        secured=security.node_properties(
            sec, is_broker=node.is_broker, client_port=node.port, internal_port=node.internal_port
        ),
    )
    return dict(line.split("=", 1) for line in text.splitlines())


def test_secured_broker_client_and_internal_listeners_authorizer_scram(tmp_path: Path) -> None:
    sec = security.Security("sasl_ssl", tmp_path, {"admin": "a", "offsetguard": "o"})
    props = _secured_properties(sec, config.NodeSpec(1, "broker", 9001, None, 9002, 9003))
    assert props["listeners"] == f"CLIENT://{HOST}:9001,INTERNAL://{HOST}:9003"
    assert props["advertised.listeners"] == props["listeners"]
    assert props["inter.broker.listener.name"] == "INTERNAL"
    assert (
        props["listener.security.protocol.map"] == "CLIENT:SASL_SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
    )
    assert props["authorizer.class.name"] == security.AUTHORIZER
    assert props["super.users"] == "User:admin;User:ANONYMOUS"
    assert props["listener.name.client.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["listener.name.client.ssl.keystore.location"] == str(tmp_path / "server.pem")


def test_secured_mtls_requires_client_certificates_cn_as_principal(tmp_path: Path) -> None:
    sec = security.Security("mtls", tmp_path)
    props = _secured_properties(sec, config.NodeSpec(1, "broker,controller", 9001, 9004, 9002, 9003))
    assert props["listeners"] == f"CLIENT://{HOST}:9001,INTERNAL://{HOST}:9003,CONTROLLER://{HOST}:9004"
    assert props["listener.name.client.ssl.client.auth"] == "required"
    assert props["ssl.principal.mapping.rules"].startswith("RULE:^CN=")
    assert "listener.name.client.sasl.enabled.mechanisms" not in props


def test_secured_controller_only_node_runs_the_authorizer_without_client_listeners(tmp_path: Path) -> None:
    props = _secured_properties(
        security.Security("mtls", tmp_path), config.NodeSpec(100, "controller", None, 9004, 9002)
    )
    assert props["listeners"] == f"CONTROLLER://{HOST}:9004"
    assert props["authorizer.class.name"] == security.AUTHORIZER
    assert "advertised.listeners" not in props


def test_plan_nodes_secured_adds_an_internal_port_per_broker() -> None:
    nodes = config.plan_nodes(3, secured=True)
    brokers = [n for n in nodes if n.is_broker]
    assert all(n.internal_port is not None for n in brokers)
    ports = [p for n in nodes for p in (n.port, n.controller_port, n.metrics_port, n.internal_port) if p]
    assert len(ports) == len(set(ports)) == 11
    assert all(n.internal_port is None for n in config.plan_nodes(1))
    (combined,) = config.plan_nodes(1, secured=True)
    assert len({combined.port, combined.controller_port, combined.metrics_port, combined.internal_port}) == 4
    assert all(n.internal_port is None for n in config.plan_nodes(3, secured=True, zookeeper=True))


def test_format_args_add_scram_users_for_sasl_ssl_only(tmp_path: Path) -> None:
    sasl = security.Security("sasl_ssl", tmp_path, {"admin": "a1", "offsetguard": "o1"})
    assert security.format_args(sasl) == [
        "--add-scram",
        "SCRAM-SHA-512=[name=admin,password=a1]",
        "--add-scram",
        "SCRAM-SHA-512=[name=offsetguard,password=o1]",
    ]
    assert security.format_args(security.Security("mtls", tmp_path)) == []
    assert security.format_args(None) == []


def test_client_settings_validate_as_cluster_settings_password_by_file(tmp_path: Path) -> None:
    sasl = security.Security("sasl_ssl", tmp_path, {"admin": "a1", "offsetguard": "o1"})
    sasl.password_file("offsetguard").write_text("o1\n")
    assert "o1" not in repr(security.client_settings(sasl))  # status prints it: the file, never the secret
    mtls = security.Security("mtls", tmp_path)
    s = ClusterSettings(name="s", bootstrap_servers=["127.0.0.1:1"], **security.client_settings(sasl))
    assert s.sasl is not None and (s.sasl.username, s.sasl.password.get_secret_value()) == (
        "offsetguard",
        "o1",
    )
    m = ClusterSettings(name="m", bootstrap_servers=["127.0.0.1:1"], **security.client_settings(mtls))
    assert (
        m.security_protocol == "SSL" and m.tls is not None and m.tls.certfile == tmp_path / "offsetguard.crt"
    )
    assert security.client_settings(None) == {}


def test_state_keeps_the_security_section_passwords_only_in_their_files(tmp_path: Path) -> None:
    sec = security.prepare("sasl_ssl", tmp_path)
    assert sec is not None
    spec = config.NodeSpec(1, "broker,controller", 9001, 9004, 9002, 9003)
    write_state(tmp_path, "cid", [SandboxNode(spec, tmp_path / spec.name)], sec.describe())
    assert security.Security.from_state(read_security(tmp_path)) == sec
    state = (tmp_path / "sandbox.json").read_text()
    assert not [p for p in sec.passwords.values() if p in state]
    assert read_state(tmp_path)[1][0].spec == spec
    write_state(tmp_path, "cid", [SandboxNode(spec, tmp_path / spec.name)])
    assert read_security(tmp_path) is None
