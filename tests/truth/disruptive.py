"""The disruptive cells, the matrix's third phase: the cluster changes under running members while a producer
writes throughout ("under load"), so nothing else may run meanwhile (a stopped broker is every cell's).

* ``partitions-added``: a member subscribed to a 1-partition topic (its metadata refreshed every few
  seconds) while ``kafka-topics --alter`` makes it 3 and the producer writes to the new partitions as soon
  as they exist; with ``latest`` the member skips what was written before it was assigned them (a real
  skip, when it happens);
* ``reassignment``: ``kafka-reassign-partitions`` moves the partition's replicas [1] -> [2, 3];
* ``preferred-election``: replicas [1, 2] reassigned to [2, 1] (1 still leads, 2 is now preferred), then
  ``kafka-leader-election --election-type PREFERRED`` moves leadership to 2;
* ``coordinator-failover``: every such cell's group is named so that broker 3 coordinates it; broker 3
  stops (controlled shutdown) for 10 s and starts again, once for all of them; their topics have replicas
  on all three brokers (leader 1), so only the coordinator moves.

They all start together (their topics are their own); the failover cells' members read under load until
the other cells have ended, and then the one stop comes. Each cell's member reads everything acknowledged
before the cell ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sandbox.cluster import SandboxCluster
from tests.truth import ops
from tests.truth.cells import CellSpec, feed_until_read
from tests.truth.clients import Member
from tests.truth.stage import Stage

Scene = Callable[[Stage, CellSpec], None]
R = TypeVar("R")

# each library's metadata refresh interval, its own key: shortened so a member sees new partitions soon
METADATA_AGE_KEY = {
    "kafka-python": "metadata_max_age_ms",
    "aiokafka": "metadata_max_age_ms",
    "librdkafka": "topic.metadata.refresh.interval.ms",
    "java-classic": "metadata.max.age.ms",
    "java-consumer": "metadata.max.age.ms",  # KIP-848: the broker assigns new partitions itself
}
# latest: 8 s, so what is written to the new partitions at once usually lands before the member has them
# (with 3 s the Python clients were often assigned before the first write was acknowledged: no skip)
METADATA_AGE_MS = {"earliest": 3000, "latest": 8000}
# kafka-reassign-partitions refuses while any other reassignment is in progress: one at a time
REASSIGNING = threading.Lock()
COORDINATOR = 3  # the broker the failover cells' groups are named onto (their topics' leader is 1)
DOWN_SECONDS = 10.0


class Load:
    """A producer writing throughout: ``batch`` messages every ``every`` s, to each of ``partitions`` in
    turn, until stopped, ``limit`` messages or ``seconds`` s. The only writer of its stage while it runs;
    :meth:`also` adds partitions, written to at once."""

    def __init__(
        self,
        stage: Stage,
        topic: str,
        partitions: Sequence[int] = (0,),
        *,
        batch: int = 8,
        every: float = 1.0,
        limit: int = 1000,
        seconds: float = 150.0,
    ) -> None:
        self.stage, self.topic, self.partitions = stage, topic, list(partitions)
        self.batch, self.every, self.limit, self.seconds = batch, every, limit, seconds
        self.sent = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._next: list[int] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"load-{topic}", daemon=True)

    def start(self) -> Load:
        self._thread.start()
        return self

    def _run(self) -> None:
        deadline = time.monotonic() + self.seconds
        turn = 0
        try:
            while not self._stop.is_set() and self.sent < self.limit and time.monotonic() < deadline:
                if self._next:
                    partition = self._next.pop(0)
                else:
                    partition = self.partitions[turn % len(self.partitions)]
                    turn += 1
                try:
                    self.sent += len(self.stage.produce(self.topic, self.batch, partition=partition))
                except ValueError:  # "Unrecognized partition": not yet in that broker's metadata
                    self._next.insert(0, partition)
                    time.sleep(0.1)
                    continue
                if not self._next:
                    self._wake.wait(self.every)
                    self._wake.clear()
        except BaseException as exc:  # the cell fails with it (an unacknowledged send: the truth is unknown)
            self._error = exc

    def also(self, partitions: Sequence[int]) -> None:
        """Write to ``partitions`` too, starting now."""
        self._next += [p for p in partitions if p not in self.partitions]
        self.partitions += self._next
        self._wake.set()

    def stop(self) -> int:
        """Stop writing; the number of messages acknowledged (raises what the writer raised)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(60)
        if self._error is not None:
            raise RuntimeError(f"{self.stage.cell}: the load on {self.topic} failed") from self._error
        return self.sent


def drain(stage: Stage, m: Member, topic: str, timeout: float = 90) -> None:
    """Until ``m`` has read the last message acknowledged on each partition of ``topic``."""
    last: dict[int, int] = {}
    for a in stage.acked:
        if a.topic == topic:
            last[a.partition] = max(a.offset, last.get(a.partition, -1))
    for partition, offset in sorted(last.items()):
        m.wait_read(partition, offset, timeout, topic=topic)


def _running(stage: Stage, spec: CellSpec, topic: str, group: str, **extra: Any) -> Member:
    """The cell's member, subscribed, having read what was there (earliest) or a first fresh batch."""
    m = stage.member(spec.client, group, [topic], reset=spec.reset, extra=extra or None)
    feed_until_read(stage, m, topic)
    return m


def _partitions(stage: Stage, topic: str) -> int:
    described = ops.describe_topic(stage.kafka, topic)
    return len(described["partitions"]) if described is not None else 0


def _leader(stage: Stage, topic: str) -> tuple[int, list[int]]:
    described = ops.describe_topic(stage.kafka, topic)
    assert described is not None, f"{stage.cell}: no topic {topic}"
    p = next(p for p in described["partitions"] if p["partition_index"] == 0)
    return int(p["leader_id"]), [int(r) for r in p["replica_nodes"]]


# ---------------------------------------------------------------------------------------- the scenarios


def partitions_added(stage: Stage, spec: CellSpec) -> None:
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    if spec.reset == "earliest":
        stage.produce(t, 20)
    m = _running(stage, spec, t, g, **{METADATA_AGE_KEY[spec.client]: METADATA_AGE_MS[spec.reset]})
    # latest: what was written before the member first positioned is not its to read
    stage.watch(g, t, partitions=[0, 1, 2], since=0.0 if spec.reset == "earliest" else time.time())
    load = Load(stage, t).start()
    time.sleep(1)
    with ThreadPoolExecutor(1) as tool:
        adding = tool.submit(ops.add_partitions, stage.kafka, t, 3)
        while _partitions(stage, t) < 3 and not adding.done():
            time.sleep(0.25)
        load.also([1, 2])  # written to as soon as they exist
        added = time.monotonic()
        adding.result()
    for p in (1, 2):
        m.wait_read(p, 0, 90, topic=t)  # assigned and reading the new partitions
    stage.note(f"the member read the new partitions {time.monotonic() - added:.1f} s after they existed")
    time.sleep(2)
    stage.note(f"{load.stop()} messages under load")
    drain(stage, m, t)


def reassignment(stage: Stage, spec: CellSpec) -> None:
    t, g = stage.create_topic(stage.name("t"), assignment={0: [1]}), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 20)
    m = _running(stage, spec, t, g)
    load = Load(stage, t).start()
    time.sleep(1)
    with REASSIGNING:
        ops.reassign(stage.kafka, t, 0, [2, 3])
    leader, replicas = _leader(stage, t)
    stage.note(f"reassigned [1] -> {replicas}, leader {leader}")
    time.sleep(2)
    stage.note(f"{load.stop()} messages under load")
    drain(stage, m, t)


def preferred_election(stage: Stage, spec: CellSpec) -> None:
    t, g = stage.create_topic(stage.name("t"), assignment={0: [1, 2]}), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 20)
    m = _running(stage, spec, t, g)
    load = Load(stage, t).start()
    time.sleep(1)
    with REASSIGNING:
        ops.reassign(stage.kafka, t, 0, [2, 1])  # the preferred leader is now 2; 1 still leads
    before, replicas = _leader(stage, t)
    if before == replicas[0]:
        raise AssertionError(f"{stage.cell}: the reassignment to {replicas} already made {before} lead")
    time.sleep(1)
    ops.elect_leaders(stage.kafka, t, "preferred", partition=0)
    after, _ = _leader(stage, t)
    assert after == replicas[0], f"{stage.cell}: the preferred election left {after} leading"
    stage.note(f"preferred election under load: leader {before} -> {after}")
    time.sleep(2)
    stage.note(f"{load.stop()} messages under load")
    drain(stage, m, t)


class Failover:
    """One stop of the coordinator for every failover cell: each cell arrives once its member reads under
    load (or drops out, failing); when all are in and the replica moves are over, the broker stops, stays
    down, and starts again."""

    def __init__(self, kafka: SandboxCluster, cells: int) -> None:
        self.kafka = kafka
        self.cells = cells
        self.arrived: set[str] = set()
        self.restarted = threading.Event()
        self.found: dict[str, int] = {}  # each group's coordinator before the stop
        self._lock = threading.Lock()

    def arrive(self, cell: str) -> None:
        with self._lock:
            self.arrived.add(cell)
        if not self.restarted.wait(240):
            raise TimeoutError(f"{cell}: the coordinator did not come back")

    def run(
        self, groups: Callable[[], list[str]], done: Callable[[], int], moved: Callable[[], bool]
    ) -> None:
        """When every cell has arrived or is done and ``moved()`` (the moves, which need every broker, have
        ended): stop :data:`COORDINATOR`, wait, start it again."""
        try:
            deadline = time.monotonic() + 240
            while (len(self.arrived) + done() < self.cells or not moved()) and time.monotonic() < deadline:
                time.sleep(0.2)
            if not self.arrived:
                return
            self.found = coordinators(self.kafka, groups())
            self.kafka.stop_broker(COORDINATOR)
            time.sleep(DOWN_SECONDS)
        finally:
            if not self.kafka.brokers[COORDINATOR].alive():
                self.kafka.start_broker(COORDINATOR)
            self.restarted.set()


def coordinator_failover(failover: Failover) -> Scene:
    def scene(stage: Stage, spec: CellSpec) -> None:
        t, g = stage.create_topic(stage.name("t"), assignment={0: [1, 2, 3]}), _group_on(stage, COORDINATOR)
        stage.watch(g, t)
        stage.produce(t, 20)
        m = _running(stage, spec, t, g)
        load = Load(stage, t).start()
        time.sleep(2)
        failover.arrive(stage.cell)
        found = failover.found.get(g)
        stage.note(
            f"broker {COORDINATOR} stopped for {DOWN_SECONDS:.0f} s; the group's coordinator was {found}"
        )
        time.sleep(3)
        stage.note(f"{load.stop()} messages under load")
        drain(stage, m, t, 120)

    return scene


def _java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units), as the group coordinator hashes a group id."""
    h = 0
    raw = text.encode("utf-16-be")
    for i in range(0, len(raw), 2):
        h = (31 * h + int.from_bytes(raw[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _group_on(stage: Stage, broker: int) -> str:
    """A group name for the cell whose ``__consumer_offsets`` partition ``broker`` leads."""
    described = ops.describe_topic(stage.kafka, "__consumer_offsets")
    assert described is not None, "no __consumer_offsets yet"
    leaders = {int(p["partition_index"]): int(p["leader_id"]) for p in described["partitions"]}
    for i in range(1000):
        name = stage.name(f"g{i}")
        h = _java_hash(name)
        if leaders[(0 if h == -(1 << 31) else abs(h)) % len(leaders)] == broker:
            return name
    raise AssertionError(f"no group name of {stage.cell} lands on broker {broker}")


COORDINATOR_COLUMN = "COORDINATOR (ID)"


def coordinators(kafka: SandboxCluster, groups: Sequence[str]) -> dict[str, int]:
    """Each group's coordinator, as ``kafka-consumer-groups --describe --state`` prints it."""
    args = ["--describe", "--state"]
    for g in groups:
        args += ["--group", g]
    found: dict[str, int] = {}
    for line in ops.run(kafka, ops.GROUPS, *args).splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[0] in groups and fields[2].startswith("("):
            found[fields[0]] = int(fields[2].strip("()"))
    return found


# ---------------------------------------------------------------------------------------- the phase

SCENARIOS: dict[str, Scene] = {
    "partitions-added": partitions_added,
    "reassignment": reassignment,
    "preferred-election": preferred_election,
}
OPERATIONS = (*SCENARIOS, "coordinator-failover")


def run_disruptive(
    kafka: SandboxCluster,
    stages: dict[str, Stage],
    cells: Sequence[CellSpec],
    run_cell: Callable[[CellSpec, Scene], tuple[str, R]],
) -> dict[str, R]:
    """Run ``cells`` (of :data:`OPERATIONS`) all at once: the replica and partition moves (they mostly wait
    on their members) and the coordinator failover cells, whose one stop comes when the moves are over.
    ``run_cell`` runs a scene and judges the cell."""
    moves = [c for c in cells if c.operation in SCENARIOS]
    failing = [c for c in cells if c.operation == "coordinator-failover"]
    failover = Failover(kafka, len(failing))
    scene = coordinator_failover(failover)
    with ThreadPoolExecutor(max_workers=len(moves) + len(failing) + 1) as pool:
        moving = [pool.submit(run_cell, c, SCENARIOS[c.operation]) for c in moves]
        futures = [pool.submit(run_cell, c, scene) for c in failing]
        if failing:
            stop = pool.submit(
                failover.run,
                lambda: [g for c in failing for g, *_ in stages[c.id].scopes],
                lambda: sum(f.done() for f in futures),
                lambda: all(f.done() for f in moving),
            )
        results = dict(f.result() for f in moving + futures)
        if failing:
            stop.result()
    return results
