"""Every drill kind, for real: ``offsetguard serve`` (a separate process) on the 3-broker sandbox with a
webhook receiver, ``offsetguard drill`` run against it as a user runs it, and ``POST /api/v1/drills``.

The two kinds that stop brokers run here in-process (``run_drill`` with the session's own sandbox handle,
as ``offsetguard drill --sandbox`` builds it from the directory): brokers restarted by another process
would leave this session's handle on the old JVMs' pids.

The service's limits are lowered so the slow kinds finish in seconds (lag above 500 messages, a stall
after 3 s, judged at a sweep of the slow rules every 2 s rather than 30 s), and it evaluates up to every
0.5 s rather than 2.5 s (each drill waits for an evaluation); the drills' actions, the detection and the
notification path are the real ones."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cli.drill import render
from drills.brokers import SandboxBrokers
from drills.kafka_io import DrillKafka
from drills.kinds import SPECS
from drills.model import DrillResult
from drills.runner import Options, run_drill
from drills.watch import ApiWatch
from sandbox import security
from sandbox.cluster import SandboxCluster
from service.api.client import ApiClient
from tests.e2e.harness import wait_for
from tests.support.daemons import offsetguard_serve

pytestmark = pytest.mark.integration
WRITE_TOKEN = "drill-write-token-0123456789"


class Receiver:
    """A webhook receiver on loopback: keeps every document POSTed to it."""

    def __init__(self) -> None:
        received = self.received = list[dict[str, Any]]()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def service(
    kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path, Receiver]]:
    tmp = tmp_path_factory.mktemp("drills")
    receiver = Receiver()
    config = {
        "clusters": [kafka3.cluster_config("sandbox")],
        "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 1, "configs": 5},
        "store": {"path": str(tmp / "og.db")},
        "snapshots": {"directory": str(tmp / "snapshots")},
        "api": {"tokens": [{"name": "drills", "token": WRITE_TOKEN, "scopes": ["write"]}]},
        "detection": {
            "limits": {"lag_messages": 500, "stall_seconds": 3},
            "sweep_seconds": 2,
            "min_evaluation_interval_seconds": 0.5,
        },
        "notify": {
            "receivers": [{"name": "hook", "type": "webhook", "url": receiver.url}],
            "poll_seconds": 0.5,
        },
    }
    try:
        with offsetguard_serve(config, tmp) as url:
            yield url, tmp / "offsetguard.yaml", receiver
    finally:
        receiver.close()


def _api(url: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {WRITE_TOKEN}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_drill_command_every_kind_passes_alerted_notified_acked_and_cleaned_up(
    service: tuple[str, Path, Receiver], kafka3: SandboxCluster
) -> None:
    url, config, receiver = service
    kinds = [k for k, spec in SPECS.items() if spec.live_safe]  # stall included: 3 s here
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "drill",
            *kinds,
            "--config",
            str(config),
            "--url",
            url,
            "--token",
            WRITE_TOKEN,
            "--json",
            "--timeout",
            "60",
            "--notify-timeout",
            "30",
            "--lag-messages",
            "600",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    results = json.loads(done.stdout)
    print(render([DrillResult(**{k: v for k, v in r.items() if k != "result"}) for r in results]))  # for -s
    assert [r["drill"] for r in results] == kinds
    failed = {r["drill"]: r["detail"] for r in results if r["result"] != "PASS"}
    assert failed == {} and done.returncode == 0, (failed, done.stderr[-3000:])
    for r in results:
        assert r["seen_kind"] == SPECS[r["drill"]].alert_kind
        assert r["notification"] == "delivered", r
        # within the drill's timeout (a stall is judged at the service's next sweep of the slow rules)
        assert 0 <= r["detection_latency_s"] <= r["notification_latency_s"] < 60
        assert (r["acknowledged"], r["cleanup"]) == ("yes", "done")
    by_kind = {r["drill"]: r["magnitude"] for r in results}
    assert by_kind["rewind"]["messages_replayed"] == 100
    # 70 deleted unread is certain; the rest of the jump to the log end only a bound (direction unknown)
    skip = by_kind["skip"]
    assert (skip["messages_skipped"], skip["messages_deleted_unread"], skip["messages_skipped_max"]) == (
        70,
        70,
        150,
    )
    assert by_kind["retention-loss"]["messages_lost"] == 70
    assert by_kind["lag"]["lag"] == 600
    # the receiver got each drill alert, marked as a drill; an acked event-like one resolved
    hooked = {d["alert"]["id"]: d["alert"] for d in receiver.received}
    for r in results:
        assert hooked[r["alert_id"]]["drill"] is True
    _, rewind = _api(f"{url}/api/v1/alerts/{results[0]['alert_id']}")
    assert (rewind["status"], rewind["resolved_reason"], rewind["ack"]["by"]) == (
        "resolved",
        "acknowledged",
        "drill",
    )
    # nothing of the drills is left on the cluster
    topics = set(
        kafka3.run_tool(
            "kafka.admin.TopicCommand", "--bootstrap-server", kafka3.bootstrap_servers, "--list", timeout=60
        ).stdout.split()
    )
    assert not any(t.startswith("offsetguard-drill-") for t in topics)


def test_post_drills_runs_in_the_service_and_reports_through_get(service: tuple[str, Path, Receiver]) -> None:
    url, _, _ = service
    status, run = _api(f"{url}/api/v1/drills", "POST", {"kinds": ["rewind"], "timeout_seconds": 60})
    assert (status, run["status"], run["kinds"]) == (202, "running", ["rewind"])
    busy, refused = _api(f"{url}/api/v1/drills", "POST", {"kinds": ["lag"]})
    assert (busy, refused["error"]) == (409, "drill_running")
    final = wait_for(
        lambda: (r := _api(f"{url}/api/v1/drills/{run['id']}")[1])["status"] == "done" and r, 180, "done"
    )
    assert final["passed"] is True, final
    [result] = final["results"]
    assert (result["result"], result["seen_kind"], result["acknowledged"]) == ("PASS", "offset_rewind", "yes")
    assert _api(f"{url}/api/v1/drills")[1]["drills"][0]["id"] == run["id"]


def test_sandbox_drills_unclean_election_and_coordinator_failover(
    service: tuple[str, Path, Receiver], kafka3: SandboxCluster
) -> None:
    url, _, receiver = service
    kafka = DrillKafka(kafka3.cluster_settings("sandbox", principal=security.ADMIN), SandboxBrokers(kafka3))
    watch = ApiWatch(ApiClient(url, WRITE_TOKEN), "sandbox")
    try:
        results = [
            run_drill(SPECS[kind], kafka, watch, Options(timeout_s=90, notify_timeout_s=30))
            for kind in ("unclean-election", "coordinator-failover")
        ]
    finally:
        kafka.close()
        for broker_id, node in kafka3.brokers.items():  # a failed drill's restart: the next tests need all
            if not node.alive():
                kafka3.start_broker(broker_id)
    print(render(results))  # for -s
    assert [(r.drill, r.passed) for r in results] == [
        ("unclean-election", True),
        ("coordinator-failover", True),
    ], [r.detail for r in results]
    unclean, failover = results
    assert (unclean.seen_kind, unclean.seen_severity, unclean.magnitude["beyond"]) == (
        "committed_beyond_log_end",
        "critical",
        50,
    )
    assert (unclean.notification, unclean.acknowledged, unclean.cleanup) == ("delivered", "yes", "done")
    assert {d["alert"]["id"]: d["alert"]["drill"] for d in receiver.received}[unclean.alert_id] is True
    # nothing raised on the failed-over group; the service followed it to another coordinator
    assert (failover.seen_kind, failover.detail, failover.cleanup) == (None, "no alert in 15 s", "done")
    moved = failover.magnitude
    assert moved["coordinator_before"] != moved["coordinator_after"] and moved["committed"] == 200
    assert failover.detection_latency_s is not None and failover.detection_latency_s < 90
