"""bench/detect: time from a rewinding commit's acknowledgement to its ``offset_rewind`` alert being stored.

Starts a 1-node sandbox with steady traffic (a producer and a two-member consumer group reading and
committing), runs the real runtime (default collector intervals: the tail is what sees the commit), then
injects rewinds one group at a time: commit 50, wait until detection holds it, commit 20. The clock starts
when the OffsetCommit response is back at the client and stops when the detection loop's listener is
told of the stored alert (called after the alert transaction commits).

    .venv/bin/python -m bench.detect [--rewinds 24]

Prints p50/p95/max and writes bench/results/detect.json. Target: p95 <= 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from alerts.state import CommitKey
from sandbox.cluster import SandboxCluster, start_sandbox
from service.runtime import Runtime, build_runtime
from service.settings import Settings, load_settings
from store.alert_records import Alert

RESULTS = Path(__file__).resolve().parent / "results"
TOPIC = "bench-detect"
PARTITIONS = 4


class Traffic:
    """A producer (~100 messages/s) and a two-member group reading and committing, in threads."""

    def __init__(self, cluster: SandboxCluster) -> None:
        self.cluster = cluster
        self.halt = threading.Event()
        self.produced = 0
        self.consumed = 0
        self.threads = [threading.Thread(target=self._produce, daemon=True)] + [
            threading.Thread(target=self._consume, daemon=True) for _ in range(2)
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.halt.set()
        for t in self.threads:
            t.join(30)

    def _produce(self) -> None:
        producer = KafkaProducer(bootstrap_servers=self.cluster.bootstrap_servers, linger_ms=5)
        while not self.halt.wait(0.01):
            producer.send(TOPIC, b"x")
            self.produced += 1
        producer.close()

    def _consume(self) -> None:
        consumer = KafkaConsumer(
            TOPIC,
            bootstrap_servers=self.cluster.bootstrap_servers,
            group_id="bench-steady",
            enable_auto_commit=False,
        )
        while not self.halt.is_set():
            batches = consumer.poll(timeout_ms=200)
            if batches:
                self.consumed += sum(len(b) for b in batches.values())
                consumer.commit()
        consumer.close(autocommit=False)


def settings_for(cluster: SandboxCluster, tmp: Path) -> Settings:
    return load_settings(
        clusters=[cluster.cluster_settings("bench").model_dump()],
        store={"path": str(tmp / "og.db")},
        snapshots={"directory": str(tmp / "snapshots")},
    )


def commit(admin: KafkaAdminClient, group: str, partition: int, offset: int) -> float:
    """Commit and return the time the OffsetCommit response was back (every partition accepted)."""
    result = admin.alter_group_offsets(
        group, {TopicPartition(TOPIC, partition): OffsetAndMetadata(offset, "", -1)}
    )
    acked = time.time()
    errors = [e for e in result.values() if e not in (None, kerr.NoError)]
    if errors:
        raise RuntimeError(f"commit refused: {errors}")
    return acked


async def inject(runtime: Runtime, cluster: SandboxCluster, count: int) -> list[dict[str, Any]]:
    stored: dict[str, float] = {}
    alerts_by_group: dict[str, Alert] = {}

    async def listener(alerts: Sequence[Alert]) -> None:
        now = time.time()
        for a in alerts:
            if a.kind == "offset_rewind" and a.group is not None and a.group not in stored:
                stored[a.group] = now
                alerts_by_group[a.group] = a

    (detection,) = runtime.detections
    detection.add_listener(listener)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    samples = []
    try:
        for i in range(count):
            group, partition = f"bench-rewind-{i:03d}", i % PARTITIONS
            await asyncio.to_thread(commit, admin, group, partition, 50)
            key = CommitKey(group, TOPIC, partition)
            while (point := detection.state.commits.get(key)) is None or point.offset != 50:
                await asyncio.sleep(0.01)
            acked = await asyncio.to_thread(commit, admin, group, partition, 20)
            deadline = time.monotonic() + 30
            while group not in stored:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no offset_rewind alert for {group} within 30 s")
                await asyncio.sleep(0.005)
            alert = alerts_by_group[group]
            samples.append(
                {
                    "group": group,
                    "partition": partition,
                    "ack_to_stored_s": stored[group] - acked,
                    "ack_to_evaluation_s": alert.started_at - acked,
                    "messages_replayed": alert.magnitude.get("messages_replayed"),
                }
            )
            print(f"{group}: {stored[group] - acked:.3f} s", flush=True)
            await asyncio.sleep(0.3)
    finally:
        admin.close()
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


async def run(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-detect-") as tmp:
        cluster = start_sandbox(Path(tmp) / "kafka", brokers=1)
        traffic = Traffic(cluster)
        runtime = None
        try:
            admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
            admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])
            admin.close()
            traffic.start()
            runtime = build_runtime(settings_for(cluster, Path(tmp)))
            await runtime.start()
            while not all(t.caught_up for t in runtime.tails):
                await asyncio.sleep(0.1)
            await asyncio.sleep(3)  # steady state: collectors ran, the group commits
            samples = await inject(runtime, cluster, count)
        finally:
            if runtime is not None:
                await runtime.stop()
            traffic.stop()
            cluster.down()
    latencies = [s["ack_to_stored_s"] for s in samples]
    return {
        "rewinds": len(samples),
        "distinct_alerts": len({s["group"] for s in samples}),
        "p50_s": statistics.median(latencies),
        "p95_s": percentile(latencies, 0.95),
        "max_s": max(latencies),
        "target_p95_s": 2.0,
        "traffic": {"produced": traffic.produced, "consumed": traffic.consumed},
        "samples": samples,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewinds", type=int, default=24)
    args = parser.parse_args()
    result = asyncio.run(run(args.rewinds))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "detect.json").write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{result['rewinds']} rewinds, {result['distinct_alerts']} alerts: p50 {result['p50_s']:.3f} s, "
        f"p95 {result['p95_s']:.3f} s, max {result['max_s']:.3f} s (target p95 <= 2 s)"
    )


if __name__ == "__main__":
    main()
