"""What offsetguard says when one of its ACLs is taken away (issue 14): a secured sandbox (SASL_SSL, the
StandardAuthorizer), ``offsetguard serve`` as ``User:offsetguard`` with exactly ``collectors.acls.GRANTS``,
a group that commits (default settings but a 5 s configs interval); then each grant removed in turn for
``--hold`` seconds and given back. Prints and
writes, per grant: whether the service stayed up and ready, what ``/readyz`` and the group's detail say it
cannot see, the tail's state, and every alert raised meanwhile.

    python -m bench.acl_removal [--hold 20] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from bench.serve_proc import Serve, until
from collectors import acls
from collectors.kafka.admin import acl_bindings
from sandbox.cluster import start_sandbox
from sandbox.security import MONITOR

TOPIC = GROUP = "acl-removal"
RESULTS = Path(__file__).resolve().parent / "results" / "acl_removal.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold", type=float, default=20.0, help="seconds each grant stays removed")
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="og-acl-"))
    cluster = start_sandbox(work / "sandbox", brokers=1, secure="sasl_ssl")
    admin = KafkaAdminClient(**cluster.client_config())
    # default settings but the configs interval (5 min): DescribeConfigs must run while a grant is away
    serve = Serve(cluster, "secured", work / "serve", {"intervals": {"configs": 5}})
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
        producer = KafkaProducer(**cluster.client_config())
        for i in range(100):
            producer.send(TOPIC, b"m%d" % i, partition=0)
        producer.flush(30)
        producer.close()
        admin.alter_group_offsets(GROUP, {TopicPartition(TOPIC, 0): OffsetAndMetadata(60, "", -1)})
        until(serve.ready, 120, "ready with every grant")
        until(lambda: serve.committed(GROUP, TOPIC, 0) == 60, 60, "the group seen")
        rows = [_without(admin, serve, grant, args.hold) for grant in acls.GRANTS]
    finally:
        serve.stop()
        admin.close()
        cluster.down()
    for row in rows:
        print(json.dumps(row))
    RESULTS.write_text(
        json.dumps({"benchmark": "acl_removal", "hold_seconds": args.hold, "rows": rows}, indent=1)
    )


def _without(admin: KafkaAdminClient, serve: Serve, grant: acls.Grant, hold: float) -> dict[str, Any]:
    [binding] = acl_bindings(MONITOR, [grant])
    before = {a["id"] for a in serve.alerts()}
    admin.delete_acls([binding])  # an ACL is its own exact filter
    time.sleep(hold)
    ready = serve.http.get("/readyz")
    detail = serve.http.get(f"/api/v1/clusters/{serve.name}/groups/{GROUP}")
    alive = serve.proc.poll() is None
    raised = [
        {k: a.get(k) for k in ("kind", "severity", "cause", "group", "topic", "magnitude")}
        for a in serve.alerts()
        if a["id"] not in before
    ]
    admin.create_acls([binding])
    back = until(serve.ready, 120, f"ready again after {grant}")
    body = ready.json()
    return {
        "grant": f"{grant.resource} {grant.name} {grant.operation}",
        "alive": alive,
        "ready": ready.status_code == 200,
        "reasons": body.get("reasons"),
        "unobserved": {
            c["name"]: c.get("unobserved") for c in body.get("collectors", []) if c.get("unobserved")
        },
        "stale_or_failing": [
            c["name"] for c in body.get("collectors", []) if c.get("stale") or c.get("last_error")
        ],
        "tail": [{k: t.get(k) for k in ("state", "caught_up", "last_error")} for t in body.get("tail", [])],
        "group_detail": detail.status_code,
        "group_unobserved": detail.json().get("unobserved")
        if detail.status_code == 200
        else detail.text[:200],
        "group_committed": _committed(detail),
        "alerts_raised": raised,
        "seconds_to_ready_after_regrant": round(back, 1),
    }


def _committed(detail: httpx.Response) -> list[Any]:
    if detail.status_code != 200:
        return []
    return [(p["topic"], p["partition"], p["committed_offset"]) for p in detail.json()["partitions"]]


if __name__ == "__main__":
    main()
