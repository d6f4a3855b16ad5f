import json
from pathlib import Path

import pytest

from sandbox import config, versions
from sandbox.config import NodeSpec, SandboxError
from sandbox.node import read_kafka


def test_release_by_line_by_version_and_default() -> None:
    assert versions.release("3.9").version == "3.9.1"
    assert versions.release("3.3.2").line == "3.3"
    assert versions.release(None).version == versions.DEFAULT_VERSION == "4.1.2"
    assert versions.release("4.0").at_least == (4, 0)


def test_an_unknown_release_is_a_clear_error_listing_the_known_ones() -> None:
    with pytest.raises(SandboxError, match=r"cannot run Kafka '2.8'.*3.3 \(3.3.2\)"):
        versions.release("2.8")


def test_zookeeper_mode_on_3x_only() -> None:
    assert versions.check_mode(versions.release("3.3"), "zookeeper") == "zookeeper"
    assert versions.check_mode(versions.release("4.0"), "kraft") == "kraft"
    with pytest.raises(SandboxError, match=r"4\.0\.2 has no zookeeper mode"):
        versions.check_mode(versions.release("4.0"), "zookeeper")


def test_the_default_release_keeps_lib_the_others_live_under_versions(tmp_path: Path) -> None:
    assert versions.lib_dir(tmp_path, versions.release(None)) == tmp_path / "lib"
    assert versions.lib_dir(tmp_path, versions.release("3.9")) == tmp_path / "versions/3.9.1/lib"


def test_ensure_jars_uses_resolved_jars_without_maven(tmp_path: Path) -> None:
    lib = tmp_path / "versions/3.3.2/lib"
    lib.mkdir(parents=True)
    (lib / "kafka_2.13-3.3.2.jar").touch()
    assert versions.ensure_jars(tmp_path, versions.release("3.3")) == lib


def test_ensure_jars_without_a_pom_says_so(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"no Kafka 3\.9\.1 jars"):
        versions.ensure_jars(tmp_path, versions.release("3.9"))


def test_log_option_log4j1_for_3x_log4j2_for_4x(tmp_path: Path) -> None:
    old = versions.log_option(versions.release("3.9"), tmp_path, tool=False)
    assert old == f"-Dlog4j.configuration=file:{tmp_path / 'log4j.properties'}"
    assert "log4j.rootLogger=INFO, out" in (tmp_path / "log4j.properties").read_text()
    tool = versions.log_option(versions.release("3.3"), tmp_path, tool=True)
    assert "Target=System.err" in Path(tool.split("file:", 1)[1]).read_text()
    new = versions.log_option(versions.release("4.1"), tmp_path, tool=False)
    assert new == f"-Dlog4j2.configurationFile={tmp_path / 'log4j2.properties'}"


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_zookeeper_mode_plan_and_broker_properties(tmp_path: Path) -> None:
    zk, *brokers = config.plan_nodes(3, zookeeper=True)
    assert (zk.node_id, zk.name, zk.is_zookeeper, zk.is_broker, zk.is_controller) == (
        0,
        "zookeeper",
        True,
        False,
        False,
    )
    assert [b.name for b in brokers] == ["broker-1", "broker-2", "broker-3"]
    props = _props(
        config.render_properties(
            brokers[0],
            voters="",
            data_dir=tmp_path,
            broker_count=3,
            offsets_partitions=10,
            zookeeper_connect=f"127.0.0.1:{zk.controller_port}",
            share_groups=False,
        )
    )
    assert (props["broker.id"], props["zookeeper.connect"]) == ("1", f"127.0.0.1:{zk.controller_port}")
    assert not {k for k in props if k.startswith(("process.", "controller.", "share.", "broker.heartbeat"))}
    assert props["listeners"] == f"PLAINTEXT://127.0.0.1:{brokers[0].port}"
    # a last in-sync replica's stop retries its controlled shutdown 0.5 s apart, not 5 s
    assert props["controlled.shutdown.retry.backoff.ms"] == "500"


def test_kraft_properties_keep_roles_quorum_and_share_settings(tmp_path: Path) -> None:
    node = NodeSpec(1, "broker,controller", 9092, 9093, 9094)
    props = _props(
        config.render_properties(
            node, voters="1@127.0.0.1:9093", data_dir=tmp_path, broker_count=1, offsets_partitions=1
        )
    )
    assert (props["process.roles"], props["node.id"]) == ("broker,controller", "1")
    assert props["share.coordinator.state.topic.min.isr"] == "1" and "zookeeper.connect" not in props


def test_zookeeper_server_properties(tmp_path: Path) -> None:
    zk = NodeSpec(0, "zookeeper", None, 2181, 9999)
    props = _props(config.render_zookeeper(zk, tmp_path))
    assert (props["clientPort"], props["clientPortAddress"], props["dataDir"]) == (
        "2181",
        "127.0.0.1",
        str(tmp_path),
    )
    assert "ruok" in props["4lw.commands.whitelist"]


def test_state_without_a_kafka_section_is_the_default_kraft(tmp_path: Path) -> None:
    (tmp_path / "sandbox.json").write_text(json.dumps({"cluster_id": "x", "nodes": []}))
    assert read_kafka(tmp_path) == (None, "kraft")
    (tmp_path / "sandbox.json").write_text(
        json.dumps({"cluster_id": "x", "nodes": [], "kafka": {"version": "3.3.2", "mode": "zookeeper"}})
    )
    assert read_kafka(tmp_path) == ("3.3.2", "zookeeper")
