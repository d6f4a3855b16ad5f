"""``offsetguard config check --connect`` on real sandboxes: the secured one with exactly offsetguard's ACLs,
each taken away in turn (Kafka's StandardAuthorizer judges), and a plain one with no authorizer."""

from __future__ import annotations

import time
from pathlib import Path

import kafka.errors as kerr
import pytest
import yaml
from kafka import KafkaAdminClient

from cli.main import main
from collectors import acls
from collectors.kafka.admin import acl_bindings
from sandbox.cluster import SandboxCluster
from sandbox.security import MONITOR

pytestmark = pytest.mark.integration


def _check(kafka: SandboxCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    config = tmp_path / "offsetguard.yaml"
    config.write_text(yaml.safe_dump({"clusters": [kafka.cluster_config("checked")]}))
    code = main(["config", "check", "--quiet", "--connect", str(config)])
    return code, capsys.readouterr().err


def _states(err: str) -> dict[acls.Grant, str]:
    rows = [line.split()[:4] for line in err.splitlines() if line.startswith("  ") and len(line.split()) >= 4]
    found = {}
    for grant in acls.GRANTS:
        [state] = [r[0] for r in rows if r[1:] == [grant.resource, grant.name, grant.operation]]
        found[grant] = state
    return found


def test_secured_cluster_every_grant_held_exit_0(
    kafka_sasl: SandboxCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(kafka_sasl, tmp_path, capsys)
    assert code == 0, err
    assert "cluster checked: connected (1 brokers" in err and f"as User:{MONITOR}" in err
    assert set(_states(err).values()) == {"ok"}, err


def test_secured_cluster_each_grant_removed_is_the_one_missing_with_its_command(
    kafka_sasl: SandboxCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = KafkaAdminClient(**kafka_sasl.client_config())
    try:
        for grant in acls.GRANTS:
            [binding] = acl_bindings(MONITOR, [grant])
            deleted = admin.delete_acls([binding])
            assert [len(m) for _, m, error in deleted if error is kerr.NoError] == [1], deleted
            try:
                deadline = time.monotonic() + 30  # the authorizer applies a removed ACL within moments
                while True:
                    code, err = _check(kafka_sasl, tmp_path, capsys)
                    states = _states(err)
                    if states[grant] == "MISSING" or time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
                assert code == 3, err
                assert [g for g, s in states.items() if s == "MISSING"] == [grant], err
                [command] = acls.kafka_acls_commands(f"User:{MONITOR}", kafka_sasl.bootstrap_servers)[
                    acls.GRANTS.index(grant) : acls.GRANTS.index(grant) + 1
                ]
                assert f"    {command}" in err.splitlines(), err
            finally:
                admin.create_acls([binding])
            deadline = time.monotonic() + 30
            while _states(_check(kafka_sasl, tmp_path, capsys)[1])[grant] != "ok":
                assert time.monotonic() < deadline, f"{grant} back"
                time.sleep(0.5)
    finally:
        admin.close()


def test_cluster_without_authorizer_allows_everything(
    kafka1: SandboxCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(kafka1, tmp_path, capsys)
    assert code == 0, err
    assert set(_states(err).values()) == {"ok"}, err
