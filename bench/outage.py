"""Issue 16's outage scenario, looped: does a whole-cluster outage leave a false forecast or offset alert?

Each run, on one 3-broker sandbox: a fresh ``offsetguard serve`` (default settings, its own store); a
topic of 300 messages (default 7-day retention) and a group committed at 300; all three brokers stopped
for ``--outage`` seconds (150), then started; a rewind of the group to 150 right after recovery; then
``--observe`` seconds more. A run is clean when the rewind is caught with its exact count (150 replayed)
and no other warning or critical alert fires but ``collector_failure`` (the monitor saying it was
blind). Prints each run and the count, writes ``bench/results/outage.json``.

    python -m bench.outage [--runs 10] [--outage 150] [--observe 90] [--dir D]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from bench.serve_proc import Serve, until
from sandbox.cluster import SandboxCluster, start_sandbox

RESULTS = Path(__file__).parent / "results"
CLUSTER = "outage"
BLIND_KINDS = {"collector_failure"}


def _commit(cluster: SandboxCluster, group: str, topic: str, offset: int) -> None:
    """Commit ``offset`` for ``group`` on ``topic[0]`` as a standalone (assign()) consumer would."""
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        deadline = time.monotonic() + 60
        while True:
            try:
                consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
                return
            except KafkaError:  # the coordinator loading after the restart: retry
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        consumer.close(autocommit=False)


def _topic(cluster: SandboxCluster, name: str, messages: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(name, 1, 3)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", retries=20)
    try:
        for i in range(messages):
            producer.send(name, b"m%d" % i, partition=0)
        producer.flush(60)
    finally:
        producer.close()


def one_run(cluster: SandboxCluster, workdir: Path, n: int, args: argparse.Namespace) -> dict[str, Any]:
    topic = group = f"og-outage-{n}-{int(time.time())}"
    serve = Serve(cluster, CLUSTER, workdir / f"run-{n}")
    out: dict[str, Any] = {"run": n, "topic": topic}
    try:
        out["ready_s"] = round(until(serve.ready, 120, "ready"), 1)
        _topic(cluster, topic, 300)
        _commit(cluster, group, topic, 300)
        time.sleep(10)  # a few cycles with the group at 300
        before = {a["id"] for a in serve.alerts()}
        down = time.monotonic()
        for broker_id in sorted(cluster.brokers):
            cluster.stop_broker(broker_id)
        out["not_ready_after_s"] = round(until(lambda: not serve.ready(), 60, "not ready"), 1)
        time.sleep(max(0.0, args.outage - (time.monotonic() - down)))
        for broker_id in sorted(cluster.brokers):
            cluster.start_broker(broker_id)
        back = time.monotonic()
        out["outage_s"] = round(back - down, 1)
        out["ready_again_after_s"] = round(until(serve.ready, 180, "ready again"), 1)
        _commit(cluster, group, topic, 150)  # the rewind, right after recovery
        rewound = time.monotonic()

        def rewind() -> list[dict[str, Any]]:
            return [a for a in serve.alerts() if a["kind"] == "offset_rewind" and a["group"] == group]

        out["rewind_detected_s"] = round(until(rewind, 60, "the rewind's alert"), 2)
        [alert] = rewind()
        out["rewind_replayed"] = alert["magnitude"].get("messages_replayed")
        time.sleep(max(0.0, args.observe - (time.monotonic() - rewound)))
        new = [a for a in serve.alerts() if a["id"] not in before]
        pages = [a for a in new if a["severity"] in ("warning", "critical")]
        out["collector_failure"] = any(a["kind"] in BLIND_KINDS for a in pages)
        out["false_alerts"] = [
            f"{a['kind']}/{a['severity']} {a['group']} {a['topic']}[{a['partition']}] {a['magnitude']}"
            for a in pages
            if a["kind"] not in BLIND_KINDS and a["id"] != alert["id"]
        ]
        out["info_alerts"] = sorted({a["kind"] for a in new if a["severity"] == "info"})
        out["clean"] = out["rewind_replayed"] == 150 and not out["false_alerts"]
    except Exception as exc:  # a run that could not finish is not clean; the loop goes on
        out["error"] = repr(exc)
        out["clean"] = False
    finally:
        serve.stop()
        for broker_id, node in cluster.brokers.items():
            if not node.alive():
                cluster.start_broker(broker_id)
    print(json.dumps(out), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--outage", type=float, default=150.0, help="seconds every broker stays down")
    parser.add_argument("--observe", type=float, default=90.0, help="seconds watched after the rewind")
    parser.add_argument("--dir", help="working directory (default: a temporary one)")
    args = parser.parse_args()
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-outage-"))
    cluster = start_sandbox(workdir / "sandbox", brokers=3)
    runs: list[dict[str, Any]] = []
    started = time.time()
    try:
        for n in range(1, args.runs + 1):
            runs.append(one_run(cluster, workdir, n, args))
    finally:
        cluster.down()
    clean = sum(1 for r in runs if r["clean"])
    result = {
        "benchmark": "outage",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "machine": {"cpus": os.cpu_count()},
        "setup": vars(args),
        "runs": runs,
        "clean_runs": clean,
        "total_runs": len(runs),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "outage.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"RESULT {clean}/{len(runs)} runs without a false forecast or offset alert", flush=True)


if __name__ == "__main__":
    main()
