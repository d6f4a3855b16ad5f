"""bench/evaluate: one detection evaluation at fleet scale, in memory (no Kafka, no store).

Folds ``--cycles`` 5 s cycles of synthetic observations through :func:`alerts.engine.evaluate` the way the
detection loop of ``offsetguard serve`` does (state kept, saved by change every 6 cycles): ``--partitions``
partitions, ``--groups`` groups committed on 25 partitions each, ``--churn`` of the partitions getting a
message and their groups a new commit every cycle (0: nothing moves). Reports CPU seconds per evaluation,
per part (``sweep``: the evaluations that judged every group-partition, every ``sweep_seconds``; counted in
their part too).

As the service evaluated before ``detection.offsets_wait_seconds`` (0 there), each cycle is two evaluations
2.5 s apart (its minimum interval): the offsets observation (an unchanged partition's ``PartitionOffsets`` the
same object as last cycle, as the offsets collector hands it; the metadata, one object for 30 s, handed along)
with the tail's commits of the cycle, then the committed offsets (every ``--committed-every`` cycles; as the
tail-fed view hands them: the same tuple while nothing moved, unchanged offsets the same objects) with the
groups every third cycle (15 s). ``--no-tail``: no live tail, commits known from the poll only.
``--one-evaluation``: everything in one evaluation per cycle, the latest metadata with each (the service with
its default ``offsets_wait_seconds``: the other observations and the tail's commits wait for the offsets one).
``--unknown-too``: each offsets evaluation also timed from the same state without its last offsets observation
(``offsets_unknown``: every partition looked at again, as after a restart; alternately before and after the
measured one), what looking only at the partitions that moved (:func:`alerts.current.moved_partitions`)
spares.

    .venv/bin/python -m bench.evaluate [--partitions 20000] [--groups 2000] [--cycles 24]
        [--churn 0.01] [--history-spacing SECONDS] [--no-tail] [--committed-every N] [--one-evaluation]
        [--unknown-too]
        [--out FILE] [--before RESULT.json --before-commit REV --before-note TEXT]

A busy cluster, every partition moving and every history filling (``history_samples`` cycles):
``--partitions 5000 --groups 500 --churn 1 --cycles 250 --history-spacing 0 --out evaluate_churn.json``
(bench/service's ``--churn 1`` fleet). Prints the figures (with the histories' samples and
the resident memory the run grew by) and writes bench/results/evaluate.json (``--out``: another name),
with ``--before``'s figures beside when given (a result of this bench with the same setup, for the code
before a change: run the two alternately on the same machine). What bench/service measures end to end,
this isolates: the cost of detection alone, to follow while changing it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from alerts.engine import evaluate
from alerts.model import CommitEvent
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from bench.result_file import write_result
from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
    TopicPartition,
)
from service.detection import state_codec
from service.memory import tune_gc
from service.settings import DetectionSettings

CLUSTER = "bench"
PER_GROUP = 25


class World:
    """The cluster's log ends and committed offsets, moved by ``churn`` every cycle."""

    def __init__(self, partitions: int, groups: int) -> None:
        self.tps = [(f"topic-{i // 100:04d}", i % 100) for i in range(partitions)]
        self.ends = [1 + i % 3 for i in range(partitions)]
        self.members = [[(g * PER_GROUP + k) % partitions for k in range(PER_GROUP)] for g in range(groups)]
        self.committed = {(g, i): 1 for g, tps in enumerate(self.members) for i in tps}
        self.by_partition: dict[int, list[int]] = {}
        for g, i in self.committed:
            self.by_partition.setdefault(i, []).append(g)
        self.cursor = 0
        self.known: dict[int, PartitionOffsets] = {}  # as the offsets collector keeps them
        self.committed_made: dict[tuple[int, int], CommittedOffset] = {}
        self.offsets_tuple: tuple[CommittedOffset, ...] | None = None
        self.committed_moved = False
        self.committed_keys: frozenset[tuple[str, str, int]] | None = None
        self.source_offset = 0

    def move(self, share: float, now: float) -> list[CommitEvent]:
        """``share`` of the partitions get a message and their groups commit it: the tail's records."""
        n = round(share * len(self.tps))
        picked = sorted({(self.cursor + k) % len(self.tps) for k in range(n)})
        self.cursor = (self.cursor + n) % len(self.tps)
        events = []
        for i in picked:
            self.ends[i] += 1
            for g in self.by_partition.get(i, ()):
                self.committed[(g, i)] = self.ends[i]
                self.committed_moved = True
                self.source_offset += 1
                topic, partition = self.tps[i]
                events.append(
                    CommitEvent(
                        CLUSTER,
                        f"group-{g:05d}",
                        topic,
                        partition,
                        self.ends[i],
                        None,
                        int(now * 1000),
                        0,
                        self.source_offset,
                    )
                )
        return events

    def metadata(self, now: float) -> ClusterMetadata:
        topics: dict[str, list[PartitionInfo]] = {}
        for t, p in self.tps:
            topics.setdefault(t, []).append(PartitionInfo(t, p, 1 + p % 3, 0, (1,), (1,)))
        brokers = tuple(Broker(b, "127.0.0.1", 9092 + b) for b in (1, 2, 3))
        infos = tuple(TopicInfo(t, False, tuple(ps), f"id-{t}") for t, ps in topics.items())
        return ClusterMetadata(CLUSTER, now, "cluster-id", 1, brokers, infos)

    def offsets(self, now: float) -> OffsetsObservation:
        """An unchanged partition's offsets are the same object as last time (collectors.offsets)."""
        parts = []
        for i, ((t, p), e) in enumerate(zip(self.tps, self.ends, strict=True)):
            o = self.known.get(i)
            if o is None or o.log_end != e:
                o = self.known[i] = PartitionOffsets(t, p, 0, e, 1 + p % 3, 0)
            parts.append(o)
        return OffsetsObservation(CLUSTER, now, tuple(parts))

    def committed_obs(self, now: float) -> CommittedObservation:
        """As the tail-fed committed view (collectors.tail_committed) hands it: the same offsets tuple
        while nothing moved, unchanged offsets the same objects when it is rebuilt, one key set (no key
        comes or goes here)."""
        if self.offsets_tuple is None or self.committed_moved:
            made = self.committed_made
            for (g, i), o in self.committed.items():
                c = made.get((g, i))
                if c is None or c.offset != o:
                    made[(g, i)] = CommittedOffset(f"group-{g:05d}", *self.tps[i], o, None)
            self.offsets_tuple = tuple(made[k] for k in self.committed)
            self.committed_moved = False
        if self.committed_keys is None:
            self.committed_keys = frozenset((c.group, c.topic, c.partition) for c in self.offsets_tuple)
        names = tuple(self.group_names())
        return CommittedObservation(CLUSTER, now, self.offsets_tuple, names, keys=self.committed_keys)

    def group_names(self) -> list[str]:
        return [f"group-{g:05d}" for g in range(len(self.members))]

    def groups(self, now: float) -> GroupsObservation:
        infos = []
        for g, tps in enumerate(self.members):
            name = f"group-{g:05d}"
            member = GroupMember(
                f"{name}-m", "client", "/127.0.0.1", None, tuple(TopicPartition(*self.tps[i]) for i in tps)
            )
            infos.append(GroupInfo(name, "classic", "Stable", "consumer", "range", (member,), 1, 1))
        return GroupsObservation(CLUSTER, now, tuple(infos))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--cycles", type=int, default=24)
    parser.add_argument("--churn", type=float, default=0.01)
    parser.add_argument(
        "--history-spacing", type=float, default=None, help="detection.history_sample_seconds (default: 60)"
    )
    parser.add_argument("--no-tail", action="store_true", help="no live tail: commits from the poll only")
    parser.add_argument("--committed-every", type=int, default=1, help="cycles between committed polls")
    parser.add_argument("--one-evaluation", action="store_true", help="one evaluation per cycle")
    parser.add_argument(
        "--unknown-too",
        action="store_true",
        help="also time each offsets evaluation from the state without its last offsets observation",
    )
    parser.add_argument("--out", default="evaluate.json", help="file name under bench/results/")
    parser.add_argument(
        "--before", help="a result this bench wrote for other code (same setup): kept beside as 'before'"
    )
    parser.add_argument("--before-commit", default=None, help="the commit --before measured")
    parser.add_argument("--before-note", default=None, help="how --before and this run were taken")
    args = parser.parse_args()
    before = _before(args) if args.before else None

    world = World(args.partitions, args.groups)
    thresholds = DetectionSettings().thresholds()  # the service's defaults (history spacing included)
    if args.history_spacing is not None:
        thresholds = replace(thresholds, history_spacing_seconds=args.history_spacing)
    tune_gc()  # as offsetguard serve does
    rss_before = _rss_mb()
    state = DetectionState()
    now = time.time()
    meta = world.metadata(now)
    parts: dict[str, list[float]] = {
        "evaluate": [],
        "offsets": [],
        "committed": [],
        "sweep": [],
        "save": [],
        "offsets_unknown": [],
    }
    tail = not args.no_tail
    findings = 0
    held: list[state_codec.Chunk | None] = []  # the last save's chunks (service.detection.loop)
    for cycle in range(args.cycles):
        now += 5.0
        events = world.move(args.churn, now - 1.0)
        polled = cycle % args.committed_every == 0
        if args.one_evaluation:
            steps = [
                (
                    "evaluate",
                    CycleInputs(
                        CLUSTER,
                        # the latest metadata with every offsets observation, as the service hands
                        # it (service.detection.inputs.FreshObservations)
                        metadata=meta,
                        offsets=world.offsets(now),
                        committed=world.committed_obs(now) if polled or not tail else None,
                        groups=world.groups(now) if cycle % 3 == 0 else None,
                        commit_events=tuple(events) if tail else (),
                        tail_live=tail,
                    ),
                    now,
                )
            ]
        else:
            steps = [
                (
                    "offsets",
                    CycleInputs(
                        CLUSTER,
                        metadata=meta,
                        offsets=world.offsets(now),
                        commit_events=tuple(events) if tail else (),
                        tail_live=tail,
                    ),
                    now,
                )
            ]
            if polled or cycle % 3 == 0:
                later = now + 2.5
                second = CycleInputs(
                    CLUSTER,
                    committed=world.committed_obs(later) if polled else None,
                    groups=world.groups(later) if cycle % 3 == 0 else None,
                    tail_live=tail,
                )
                steps.append(("committed", second, later))
        found: tuple[Any, ...] = ()
        for part, inputs, at in steps:
            # --unknown-too: before the measured evaluation at even cycles, after it at odd ones
            unknown = args.unknown_too and part == "offsets" and cycle > 0
            before_state = state
            if unknown and cycle % 2 == 0:
                parts["offsets_unknown"].append(_unknown(before_state, inputs, at, thresholds))
            t0 = time.process_time()
            found, state = evaluate(state, inputs, at, thresholds)
            spent = time.process_time() - t0
            if unknown and cycle % 2 == 1:
                parts["offsets_unknown"].append(_unknown(before_state, inputs, at, thresholds))
            if cycle > 0:  # the first cycle builds the state from nothing
                parts[part].append(spent)
                if part != "evaluate":
                    parts["evaluate"].append(spent)
                if state.swept is not None and state.swept.at == at:  # this one swept (alerts.sweep)
                    parts["sweep"].append(spent)
        if cycle % 6 == 5:
            # what the service saves: by change against the last save's chunks, its parts one at a time
            # (the first save encodes them all)
            t1 = time.process_time()
            _, changes, chunks = state_codec.encode_changes(state, held)
            for _ in changes:
                pass
            held = chunks
            parts["save"].append(time.process_time() - t1)
        findings = len(found)
    figures = {k: round(statistics.median(v), 4) for k, v in parts.items() if v}
    means = {k: round(statistics.fmean(v), 4) for k, v in parts.items() if v}
    # the service's CPU per minute: 12 cycles' evaluations and a save every state_save_seconds
    measured = args.cycles - 1
    evaluations = sum(parts["evaluate"]) * 12 / measured if measured > 0 else 0.0
    saving = figures.get("save", 0.0) * 60 / DetectionSettings().state_save_seconds
    per_minute = {"evaluate": round(evaluations, 3), "save": round(saving, 3)}
    del steps, found
    gc.collect()
    samples = sum(map(len, state.ranges.values())) + sum(map(len, state.commit_history.values()))
    memory = {
        "history_samples": samples,
        "rss_growth_mb": round(_rss_mb() - rss_before, 1),
        "rss_growth_bytes_per_sample": round((_rss_mb() - rss_before) * 2**20 / samples) if samples else None,
    }
    result: dict[str, Any] = {
        "benchmark": "evaluate",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args) | {"committed_group_partitions": len(world.committed)},
        "median_cpu_s": figures,
        "mean_cpu_s": means,
        "cpu_s_per_minute": per_minute,  # evaluations and saves, at the service's 5 s cycle
        "findings_last_cycle": findings,
        "memory": memory,
    }
    if before is not None:
        result["before"] = before
    write_result(args.out, result)
    print(
        f"RESULT per evaluation CPU s (median): {figures}; mean {means}; CPU s per minute {per_minute}; "
        f"findings {findings}; memory {memory}"
    )


def _unknown(state: DetectionState, inputs: CycleInputs, at: float, thresholds: Thresholds) -> float:
    """CPU seconds of ``inputs``' evaluation from ``state`` without its last offsets observation (every
    partition looked at again, as after a restart); the result is dropped."""
    t0 = time.process_time()
    evaluate(replace(state, ranged=None), inputs, at, thresholds)
    return time.process_time() - t0


def _before(args: argparse.Namespace) -> dict[str, Any]:
    """The figures of ``--before`` (a result of this bench), refused unless taken with this run's setup."""
    earlier = json.loads(Path(args.before).read_text())
    own = ("out", "before", "before_commit", "before_note")
    setup = {k: v for k, v in vars(args).items() if k not in own}
    differ = sorted(k for k, v in setup.items() if earlier.get("setup", {}).get(k) != v)
    if earlier.get("benchmark") != "evaluate" or differ:
        raise SystemExit(f"--before {args.before}: not this bench's result with this setup ({differ})")
    kept = {"commit": args.before_commit, "note": args.before_note, "when": earlier["when"]}
    return kept | {k: earlier[k] for k in ("median_cpu_s", "mean_cpu_s", "cpu_s_per_minute", "memory")}


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    main()
