"""The soak judged against what its consumers really read (the ground-truth harness's oracle and verdict).

After the incidents the traffic and every member stop (a library's clean close commits what it read) and
offsetguard is given until it shows each group's last commit. Then, from the producers' journal of
acknowledged messages, every member's journal of processed records, the payloads the log holds now and
the committed offsets, each group-partition's truth (read, re-read, lost, skipped, pending) is set
beside every finding offsetguard stored: no claim above the truth, no certain loss missed, no page
without harm (:mod:`tests.truth.verdict`).

Each group's scope is every message of its topic (its first member reads from the earliest); a retired
group's ends at the first message it had not committed when it was deleted. The compacted topic is left
out: what its cleaner removes was superseded by a newer value of the same key, which a consumer reading
later gets instead (no loss, and offsetguard says nothing of it).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from bench.serve_proc import Serve, until
from bench.soak.world import World, retrying
from tests.truth import ops
from tests.truth.logread import held_payloads
from tests.truth.oracle import partition_truths, truths
from tests.truth.producer import topic_id
from tests.truth.records import Acked, load_acked
from tests.truth.verdict import Claim, partition_problems, problems

Key = tuple[str, str, int]  # (group, topic, partition)
SEEN_TIMEOUT_S = 180.0
EVALUATIONS_AFTER = 3  # after the last commits were seen, before the findings are judged


def judge(world: World, serve: Serve, phase: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Stop the traffic and every member, let offsetguard see the last commits, and judge every stored
    finding (what is acknowledged after the log is read back would look lost). ``phase(name)`` is called
    at the end of each step (the run's timings)."""
    world.traffic.halt()
    world.members.close()
    phase("truth_stop_members")
    scopes = _scopes(world)
    committed = _committed(world, scopes)
    phase("truth_committed")
    unseen = _wait_seen(serve, committed)
    phase("truth_wait_seen")
    topics = sorted({t for _, t, _ in scopes})
    held = held_payloads(world.cluster, topics, timeout=180)
    phase("truth_read_log")
    acked = load_acked(world.traffic.acked_journal.path)
    reads = world.members.reads()
    found = truths(acked, reads, held, committed, dict.fromkeys(scopes, 0.0), _ends(world, scopes, acked))
    ids = {t: _topic_id(world, t) for t in topics}
    cut = partition_truths([a for a in acked if a.topic in ids], held, ids)
    claims = [_claim(a) for a in serve.alerts() if a["kind"] != "collector_failure"]
    judged = [p for t in found.values() for p in problems(t, claims)]
    judged += [p for t in cut.values() for p in partition_problems(t, claims)]
    by_client: Counter[str] = Counter(r.client for r in reads)
    phase("truth_judge")
    return {
        "truth": {
            "group_partitions": len(found),
            "acknowledged": len(acked),
            "records_read": len(reads),
            "reads_by_client": dict(sorted(by_client.items())),
            "group_partitions_by_client": dict(
                sorted(Counter(world.clients[g] for g, _, _ in scopes).items())
            ),
            "reread": sum(t.reread for t in found.values()),
            "lost": sum(t.lost for t in found.values()),
            "skipped": sum(t.skipped for t in found.values()),
            "pending": sum(t.pending for t in found.values()),
            "truncated": sum(t.truncated for t in cut.values()),
            "members_revived": list(world.members.revived),
            "commits_not_seen": unseen,
            "harmed": [
                {
                    "group": t.group,
                    "topic": t.topic,
                    "partition": t.partition,
                    "lost": t.lost,
                    "skipped": t.skipped,
                    "reread": t.reread,
                }
                for t in found.values()
                if t.lost or t.skipped
            ],
        },
        "truth_problems": judged,
    }


def _scopes(world: World) -> list[Key]:
    compacted = {t for t in world.topics if t.startswith("soak-compact")}
    out: list[Key] = []
    for group in sorted(world.started):
        topic = world.topic_of[group]
        if topic in compacted:
            continue
        out.extend((group, topic, p) for p in _partitions(world, topic))
    return out


def _partitions(world: World, topic: str) -> list[int]:
    admin = world.admin()
    try:
        [desc] = admin.describe_topics([topic])
    finally:
        admin.close()
    return sorted(int(p["partition_index"]) for p in desc["partitions"])


def _ends(world: World, scopes: list[Key], acked: list[Acked]) -> dict[Key, float]:
    """A retired group's scope ends at the first message it had not committed when it was deleted (when
    that message was acknowledged; none yet: when the group was deleted)."""
    at = {(a.topic, a.partition, a.offset): a.at for a in acked}
    out = {}
    for key in scopes:
        group, topic, partition = key
        if group in world.retired:
            deleted_at, committed = world.retired[group]
            offset = committed.get((topic, partition))
            out[key] = deleted_at if offset is None else at.get((topic, partition, offset), deleted_at)
    return out


def _committed(world: World, scopes: list[Key]) -> dict[Key, int | None]:
    out: dict[Key, int | None] = {}
    for group in sorted({g for g, _, _ in scopes}):
        got: dict[tuple[str, int], int] = {}
        retrying(partial(_fetch, world, group, got))
        for key in [k for k in scopes if k[0] == group]:
            out[key] = got.get((key[1], key[2]))
    return out


def _fetch(world: World, group: str, into: dict[tuple[str, int], int]) -> None:
    into.update(ops.committed_offsets(world.cluster, group))


def _wait_seen(serve: Serve, committed: dict[Key, int | None]) -> list[str]:
    """Wait until offsetguard shows every group's last commit (at most :data:`SEEN_TIMEOUT_S`), then
    :data:`EVALUATIONS_AFTER` more evaluations; the group-partitions it still did not show."""
    deadline = time.monotonic() + SEEN_TIMEOUT_S
    waiting = {k: v for k, v in committed.items() if v is not None}
    while waiting and time.monotonic() < deadline:
        waiting = {k: v for k, v in waiting.items() if serve.committed(*k) != v}
        if waiting:
            time.sleep(2)
    # held findings come out on the evaluations after the last commit (the first one counted may have
    # started before it was seen: the others started after)
    seen = evaluations(serve)
    until(lambda: evaluations(serve) >= seen + EVALUATIONS_AFTER, 60, f"{EVALUATIONS_AFTER} evaluations")
    return [f"{g} {t}[{p}]={v}" for (g, t, p), v in sorted(waiting.items())]


def evaluations(serve: Serve) -> int:
    """The detection evaluations ``serve`` completed (``offsetguard_detection_evaluations_total``)."""
    r = serve.http.get("/metrics")
    r.raise_for_status()
    series = f'offsetguard_detection_evaluations_total{{cluster="{serve.name}"}} '
    for line in r.text.splitlines():
        if line.startswith(series):
            return int(float(line.removeprefix(series)))
    raise RuntimeError(f"offsetguard serve's /metrics has no {series.strip()}")


def _topic_id(world: World, topic: str) -> str | None:
    try:
        return topic_id(world.cluster.bootstrap_servers, topic)
    except Exception:  # the topic is gone: no current incarnation
        return None


def _claim(alert: dict[str, Any]) -> Claim:
    return Claim(
        alert["kind"],
        alert["severity"],
        alert.get("cause"),
        alert.get("group"),
        alert.get("topic"),
        alert.get("partition"),
        dict(alert.get("magnitude_total") or alert["magnitude"]),
        alert.get("evidence") or {},
    )
