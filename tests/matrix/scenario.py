"""One Kafka release of the version matrix, exercised the way users run offsetguard on it.

Each ``test_kafka_*`` module starts that release (:func:`matrix_run`: 3 brokers, on ZooKeeper or a KRaft
controller), runs a separate ``offsetguard serve`` with short intervals, and replays on it:

* a rewind by an active member (200 written, committed at 100, then at 20: 80 replayed, critical,
  snapshotted);
* an unclean leader election with truncation (the KAFKA_NOTES recipe: 150 committed, the out-of-sync
  replica elected with log end 100): committed 50 beyond the log end, and the truncation of 50;

then checks the collectors and the tail (no decode error, no unknown record), every ``__consumer_offsets``
record offsetguard's codec decodes against what that release's own ``DumpLogSegments --offsets-decoder``
prints and every offset commit against its own console ``OffsetsMessageFormatter`` (with the value
version the release wrote, where the formatter prints it), ``/metrics``, and the API fallbacks the release
needs (:mod:`collectors.compat`). The modules
import the tests below; each runs them on its own release.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic

from bench.serve_proc import Serve, until
from collectors.codec import GroupMetadata, GroupTombstone, OffsetCommit, OffsetCommitTombstone, decode
from collectors.kafka.offsets_topic import read_offsets_topic
from sandbox.cluster import SandboxCluster, start_sandbox
from tests.collectors.codec.golden.kafka_tools import parse_concatenated_json
from tests.e2e.consumers import consume_and_commit, group_consumer, join
from tests.e2e.harness import create_topics, produce, retrying, wait_for
from tests.matrix.ahead import Ahead, Release

__all__ = [  # what each module runs on its release: ``from tests.matrix.scenario import *``
    "test_every_offset_commit_decodes_as_the_release_s_console_formatter_prints_it",
    "test_every_offsets_topic_record_decodes_as_the_release_itself_prints_it",
    "test_fallbacks_are_exactly_those_the_release_needs",
    "test_metrics_serve_the_lag_and_the_brokers",
    "test_rewind_by_an_active_member_80_replayed_critical_snapshotted",
    "test_serve_ready_every_collector_and_the_tail_clean",
    "test_unclean_election_committed_50_beyond_the_truncated_log_end",
]
A, B = 1, 2  # the unclean scenario's first leader, and the follower left behind
NAME = "matrix"


@dataclass
class MatrixRun:
    kafka: SandboxCluster
    serve: Serve
    rewind: dict[str, str] = field(default_factory=dict)  # topic, group
    unclean: dict[str, str] = field(default_factory=dict)


def matrix_run(release: Release, work: Path) -> Generator[MatrixRun, None, None]:
    """The release's cluster and ``offsetguard serve`` on it (in ``work``), both scenarios replayed."""
    version, mode = release
    kafka = start_sandbox(work / "sandbox", brokers=3, kafka_version=version, mode=mode, broker_heap="256m")
    settings = {
        "intervals": {
            "metadata": 1,
            "offsets": 1,
            "groups": 1,
            "committed": 1,
            "configs": 5,
            "broker_metrics": 1,
        },
        "snapshots": {"directory": str(work / "snapshots")},
        "tail": {"start_from": "earliest", "checkpoint_seconds": 1},
        # every observation evaluated (the default 2.5 s folds 1-s observations: a log end seen for under
        # 2.5 s before its leader went down never reached detection, and the truncation went unreported)
        "detection": {"snapshot_group_interval_seconds": 0, "min_evaluation_interval_seconds": 0.25},
    }
    serve = Serve(kafka, NAME, work / "serve", settings)
    try:
        until(serve.ready, 120, f"offsetguard serve ready on Kafka {version} ({mode})")
        run = MatrixRun(kafka, serve)
        run.rewind = _rewind_by_active_member(run)
        run.unclean = _unclean_election(run)
        yield run
    finally:
        serve.stop()
        kafka.kill()  # throwaway: a graceful ZooKeeper-mode stop took 22 s


def release_fixture(version: str, mode: str) -> Any:
    """The module-scoped ``matrix`` fixture of a module testing ``version`` in ``mode`` (the module's
    ``RELEASE``), its run set up while the module before it was tested (:mod:`tests.matrix.ahead`)."""

    @pytest.fixture(scope="module", name="matrix")
    def matrix(matrix_ahead: Ahead[MatrixRun]) -> Iterator[MatrixRun]:
        try:
            yield matrix_ahead.take((version, mode))
        finally:
            matrix_ahead.done((version, mode))

    return matrix


def _rewind_by_active_member(run: MatrixRun) -> dict[str, str]:
    kafka, serve = run.kafka, run.serve
    topic = group = f"matrix-rewind-{uuid.uuid4().hex[:6]}"
    create_topics(kafka, [NewTopic(topic, replica_assignments={0: [A]})])
    produce(kafka, topic, 200)
    consumer = group_consumer(kafka, group)
    tp = TopicPartition(topic, 0)
    try:
        join(consumer, topic)
        wait_for(lambda: consumer.poll(timeout_ms=100) is not None and consumer.assignment(), 60, "assigned")
        consumer.seek(tp, 100)
        consumer.commit()
        wait_for(lambda: serve.committed(group, topic, 0) == 100, 60, "the service saw the commit at 100")
        consumer.seek(tp, 20)  # an active member rewinds and commits it
        consumer.commit()
        wait_for(lambda: alerts(serve, "offset_rewind", topic), 60, "rewind alert")
    finally:
        consumer.close(autocommit=False)
    return {"topic": topic, "group": group}


def _unclean_election(run: MatrixRun) -> dict[str, str]:
    kafka, serve = run.kafka, run.serve
    topic = group = f"matrix-unclean-{uuid.uuid4().hex[:6]}"
    create_topics(
        kafka, [NewTopic(topic, replica_assignments={0: [A, B]}, topic_configs={"min.insync.replicas": "1"})]
    )
    try:
        produce(kafka, topic, 100)
        _sees(serve, topic, leader=A, isr=[A, B], log_end=100)
        kafka.stop_broker(B)  # controlled shutdown: the ISR shrinks to [A]
        _sees(serve, topic, isr=[A])
        produce(kafka, topic, 50, acks=1)
        consume_and_commit(kafka, group, topic, 150)
        _sees(serve, topic, log_end=150)
        wait_for(lambda: serve.committed(group, topic, 0) == 150, 60, "the service saw the commit at 150")
        kafka.stop_broker(A)  # the last in-sync replica: the partition is offline
        kafka.start_broker(B)  # out of sync, not eligible for a clean election
        admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
        try:
            retrying(lambda: admin.elect_leaders(1, {topic: [0]}), 60)  # 1: unclean
        finally:
            admin.close()
        _sees(serve, topic, leader=B, log_end=100)
        kafka.start_broker(A)  # rejoins as a follower and truncates its log to 100
        wait_for(lambda: alerts(serve, "committed_beyond_log_end", topic), 90, "committed beyond log end")
    finally:
        for broker_id in (A, B):
            if not kafka.brokers[broker_id].alive():
                kafka.start_broker(broker_id)
    return {"topic": topic, "group": group}


def _sees(serve: Serve, topic: str, timeout: float = 90, **want: Any) -> None:
    def check() -> bool:
        found = serve.partitions(topic)
        return bool(found) and all(found[0].get(k) == v for k, v in want.items())

    wait_for(check, timeout, f"the service sees {topic} with {want}")


def alerts(serve: Serve, kind: str, topic: str) -> list[dict[str, Any]]:
    return [a for a in serve.alerts() if a["kind"] == kind and a["topic"] == topic]


# ---------------------------------------------------------------- the release's own decoder

_DUMPING = re.compile(r"^Dumping .*/__consumer_offsets-(\d+)/\d+\.log$")
_RECORD = re.compile(r"^\| offset: (\d+) .* key: (.*?) payload: (.*)$")
_OLD_COMMIT = re.compile(r"^offset_commit::group=(.*),partition=(.*)-(\d+)$")
_OLD_GROUP = re.compile(r"^group_metadata::group=(.*)$")
_OLD_OFFSET = re.compile(r"^offset=(\d+)")


def kafka_dump(kafka: SandboxCluster) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Every ``__consumer_offsets`` commit and group record as the release's DumpLogSegments prints it,
    by (partition, offset), read from each partition's leader copy (the replicas hold the same records).

    Kafka 3.x prints ``offset_commit::group=G,partition=T-P`` / ``offset=N``; 4.x prints JSON keys and
    values (``{"type": .., "data": ..}``). Both become ``("commit", group, topic, partition, offset)``,
    ``("commit_tombstone", group, topic, partition)``, ``("group", group, generation, protocol_type)`` or
    ``("group_tombstone", group)``.
    """
    files = sorted(
        str(path)
        for node in kafka.brokers.values()
        for path in (node.directory / "data").glob("__consumer_offsets-*/*.log")
    )
    done = kafka.run_tool("kafka.tools.DumpLogSegments", "--offsets-decoder", "--files", ",".join(files))
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[tuple[int, int], tuple[Any, ...]] = {}
    partition = -1
    for line in done.stdout.splitlines():
        if m := _DUMPING.match(line):
            partition = int(m.group(1))
            continue
        m = _RECORD.match(line)
        if m is None or " endTxnMarker: " in line:
            continue
        parsed = _parse(m.group(2), m.group(3))
        if parsed is not None:
            found[(partition, int(m.group(1)))] = parsed
    return found


def _parse(key: str, payload: str) -> tuple[Any, ...] | None:
    deleted = payload == "<DELETE>"
    if m := _OLD_COMMIT.match(key):
        group, topic, part = m.group(1), m.group(2), int(m.group(3))
        if deleted:
            return ("commit_tombstone", group, topic, part)
        offset = _OLD_OFFSET.match(payload)
        assert offset is not None, payload
        return ("commit", group, topic, part, int(offset.group(1)))
    if m := _OLD_GROUP.match(key):
        if deleted:
            return ("group_tombstone", m.group(1))
        value = json.loads(payload)
        return ("group", m.group(1), value["generationId"], value["protocolType"])
    if not key.startswith("{"):
        return None
    k = json.loads(key)
    kind, data = int(k["type"]), k["data"]
    if kind in (0, 1):
        where = (data["group"], data["topic"], data["partition"])
        if deleted:
            return ("commit_tombstone", *where)
        return ("commit", *where, json.loads(payload)["data"]["offset"])
    if kind == 2:
        if deleted:
            return ("group_tombstone", data["group"])
        value = json.loads(payload)["data"]
        return ("group", data["group"], value["generation"], value["protocolType"])
    return None


_OLD_FORMATTED = re.compile(r"^\[(.*),(.*),(\d+)\]::(NULL|OffsetAndMetadata\(offset=(\d+),.*)$")


def kafka_formatter(kafka: SandboxCluster) -> Counter[tuple[Any, ...]]:
    """Every offset commit and commit tombstone as the release's own console ``OffsetsMessageFormatter``
    prints it: ``(group, topic, partition, offset or None, value version or None)``, counted.

    3.9 and later: ``org.apache.kafka.tools.consumer`` (JSON with the value's version); before:
    ``kafka.tools.ConsoleConsumer`` with ``GroupMetadataManager$OffsetsMessageFormatter``
    (``[g,t,p]::OffsetAndMetadata(offset=N, ...)`` or ``[g,t,p]::NULL``, no version).
    """
    new = kafka.release.at_least >= (3, 9)
    consumer = "org.apache.kafka.tools.consumer.ConsoleConsumer" if new else "kafka.tools.ConsoleConsumer"
    formatter = (
        "org.apache.kafka.tools.consumer.OffsetsMessageFormatter"
        if new
        else "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter"
    )
    done = kafka.run_tool(
        consumer,
        *("--bootstrap-server", kafka.bootstrap_servers, "--topic", "__consumer_offsets", "--from-beginning"),
        *("--formatter", formatter, "--consumer-property", "exclude.internal.topics=false"),
        *("--consumer-property", "enable.auto.commit=false"),  # its own commits would show up as it reads
        *("--group", f"matrix-formatter-{uuid.uuid4().hex[:6]}", "--timeout-ms", "5000"),
        timeout=120,
    )
    assert "Processed a total of" in done.stderr, done.stderr[-3000:]
    found: Counter[tuple[Any, ...]] = Counter()
    if not new:
        for line in done.stdout.splitlines():
            m = _OLD_FORMATTED.match(line.strip())
            if m:
                offset = None if m.group(4) == "NULL" else int(m.group(5))
                found[(m.group(1), m.group(2), int(m.group(3)), offset, None)] += 1
        return found
    for obj in parse_concatenated_json(done.stdout):
        key, value = obj["key"]["data"], obj.get("value")
        offset = value["data"]["offset"] if value else None
        version = int(value["version"]) if value else None
        found[(key["group"], key["topic"], key["partition"], offset, version)] += 1
    return found


def ours(kafka: SandboxCluster) -> dict[tuple[int, int], tuple[Any, ...]]:
    """The same records as offsetguard's codec (the tail's) decodes them from the wire."""
    snapshot = read_offsets_topic(kafka.bootstrap_servers, isolation_level="read_uncommitted")
    found: dict[tuple[int, int], tuple[Any, ...]] = {}
    for raw in snapshot.records:
        if raw.key is None:
            continue
        rec = decode(raw.key, raw.value, offset=raw.offset, partition=raw.partition)
        where = (raw.partition, raw.offset)
        if isinstance(rec, OffsetCommit):
            found[where] = ("commit", rec.group, rec.topic, rec.partition, rec.offset)
        elif isinstance(rec, OffsetCommitTombstone):
            found[where] = ("commit_tombstone", rec.group, rec.topic, rec.partition)
        elif isinstance(rec, GroupMetadata):
            found[where] = ("group", rec.group, rec.generation, rec.protocol_type)
        elif isinstance(rec, GroupTombstone) and rec.record_type == 2:
            found[where] = ("group_tombstone", rec.group)
    return found


# ---------------------------------------------------------------- the tests each module runs


def test_serve_ready_every_collector_and_the_tail_clean(matrix: MatrixRun) -> None:
    ready = until_ready(matrix.serve)
    for status in ready["collectors"]:
        assert status["last_success_at"] is not None, status
        assert status["unobserved"] == [], status
    [tail] = ready["tail"]
    assert tail["state"] == "running" and tail["caught_up"], tail
    assert (tail["decode_errors"], tail["unknown_records"]) == (0, 0), tail
    assert tail["records_total"] > 0


def until_ready(serve: Serve) -> dict[str, Any]:
    def fresh() -> dict[str, Any] | None:
        body: dict[str, Any] = serve.http.get("/readyz").json()
        clean = body["ready"] and all(not s["unobserved"] for s in body["collectors"])
        return body if clean else None

    return wait_for(fresh, 60, "ready with every collector seeing everything")


def test_rewind_by_an_active_member_80_replayed_critical_snapshotted(matrix: MatrixRun) -> None:
    [alert] = alerts(matrix.serve, "offset_rewind", matrix.rewind["topic"])
    assert (alert["group"], alert["partition"], alert["severity"]) == (matrix.rewind["group"], 0, "critical")
    assert alert["magnitude"]["messages_replayed"] == 80
    assert (alert["evidence"]["old_offset"], alert["evidence"]["new_offset"]) == (100, 20)
    snapshot = wait_for(
        lambda: matrix.serve.http.get(f"/api/v1/alerts/{alert['id']}").json()["snapshot_id"], 90, "snapshot"
    )
    manifest = matrix.serve.http.get(f"/api/v1/snapshots/{snapshot}")
    assert manifest.status_code == 200, manifest.text


def test_unclean_election_committed_50_beyond_the_truncated_log_end(matrix: MatrixRun) -> None:
    topic, group = matrix.unclean["topic"], matrix.unclean["group"]
    [beyond] = alerts(matrix.serve, "committed_beyond_log_end", topic)
    assert (beyond["group"], beyond["partition"], beyond["severity"]) == (group, 0, "critical")
    assert beyond["magnitude"]["beyond"] == 50
    assert (beyond["evidence"]["committed"], beyond["evidence"]["log_end"]) == (150, 100)
    [truncation] = wait_for(lambda: alerts(matrix.serve, "log_truncation", topic), 60, "log truncation")
    assert (truncation["severity"], truncation["cause"]) == ("critical", "unclean_leader_election")
    assert truncation["magnitude"]["messages_truncated"] == 50
    wait_for(
        lambda: matrix.serve.http.get(f"/api/v1/alerts/{beyond['id']}").json()["snapshot_id"], 90, "snapshot"
    )
    # the broker metrics of that release: its controller counted the unclean election (in ZooKeeper mode
    # the controller is a broker; in KRaft the controller node)
    [counter] = wait_for(
        lambda: [
            a for a in matrix.serve.alerts() if a["kind"] == "unclean_leader_election" and a["topic"] is None
        ],
        60,
        "the controller's unclean-election counter",
    )
    assert (counter["severity"], counter["cause"]) == ("critical", "controller_counter")
    # (the partitions it names are those whose leader change the same evaluation saw: not always ours)
    assert counter["magnitude_total"]["elections"] >= 1


def test_every_offsets_topic_record_decodes_as_the_release_itself_prints_it(matrix: MatrixRun) -> None:
    theirs, mine = kafka_dump(matrix.kafka), ours(matrix.kafka)
    commits = [r for r in theirs.values() if r[0] == "commit"]
    assert any(r[1] == matrix.rewind["group"] and r[4] == 20 for r in commits), "the rewind's commit"
    assert any(r[1] == matrix.unclean["group"] and r[4] == 150 for r in commits), "the unclean group's"
    assert {"commit", "group"} <= {r[0] for r in theirs.values()}
    missing = {k: v for k, v in theirs.items() if mine.get(k) != v}
    assert not missing, {k: (v, mine.get(k)) for k, v in list(missing.items())[:10]}


def test_every_offset_commit_decodes_as_the_release_s_console_formatter_prints_it(
    matrix: MatrixRun,
) -> None:
    snapshot = read_offsets_topic(matrix.kafka.bootstrap_servers, isolation_level="read_uncommitted")
    theirs = kafka_formatter(matrix.kafka)
    mine: Counter[tuple[Any, ...]] = Counter()
    versions = any(key[4] is not None for key in theirs)  # the JSON formatter prints the value version
    for raw in snapshot.records:
        rec = decode(raw.key, raw.value, offset=raw.offset, partition=raw.partition) if raw.key else None
        if isinstance(rec, OffsetCommit):
            mine[(rec.group, rec.topic, rec.partition, rec.offset, rec.version if versions else None)] += 1
        elif isinstance(rec, OffsetCommitTombstone):
            mine[(rec.group, rec.topic, rec.partition, None, None)] += 1
    assert any(k[0] == matrix.rewind["group"] and k[3] == 20 for k in theirs), "the rewind's commit"
    assert mine == theirs, (mine - theirs, theirs - mine)


def test_metrics_serve_the_lag_and_the_brokers(matrix: MatrixRun) -> None:
    topic, group = matrix.rewind["topic"], matrix.rewind["group"]
    lag = f'offsetguard_group_lag_messages{{cluster="{NAME}",group="{group}",partition="0",topic="{topic}"}}'

    def line() -> str | None:
        body = matrix.serve.http.get("/metrics").text
        return next((x for x in body.splitlines() if x.startswith(lag)), None)

    # 200 written, committed at 20 (eventually: /metrics follows the committed collector's poll)
    wait_for(lambda: (line() or "").endswith(" 180.0"), 30, "the group's lag 180 in /metrics")


def expected_fallbacks(matrix: MatrixRun) -> set[str]:
    """ListGroups carries group types from v5 (Kafka 3.8) on."""
    return {"list_groups_untyped"} if matrix.kafka.release.at_least < (3, 8) else set()


def test_fallbacks_are_exactly_those_the_release_needs(matrix: MatrixRun) -> None:
    ready = until_ready(matrix.serve)
    assert {f["fallback"] for f in ready["fallbacks"]} == expected_fallbacks(matrix), ready["fallbacks"]
    for f in ready["fallbacks"]:
        assert f["count"] >= 1 and f["cluster"] == NAME and f["what"], f
