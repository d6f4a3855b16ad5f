"""The unclean-election cells, run together around one election (it stops brokers every cell shares).

Each cell's topic has replicas [1, 2] (leader 1), min.insync.replicas=1. 100 messages; broker 2 stops; 50
more with acks=1; the cell's group reads 150 and stops; broker 1 stops, broker 2 starts and is elected
uncleanly with log end 100; broker 1 comes back and truncates to 100. 30 new messages; the group returns
with its ``auto.offset.reset`` and reads on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from sandbox.cluster import SandboxCluster
from tests.truth import ops
from tests.truth.cells import CellSpec, read_to, resume, sees, sees_commit
from tests.truth.stage import Stage

A, B = 1, 2


def prepare_unclean(cells: Sequence[tuple[Stage, CellSpec]]) -> None:
    """Each cell's topic (replicas [1, 2]) with its first 100 messages, seen in sync by offsetguard: no broker
    is touched yet, so this may run beside other cells."""
    _each(_named(cells), lambda s, spec, t, g: _first_hundred(s, t, g))


def _first_hundred(s: Stage, t: str, g: str) -> None:
    s.create_topic(t, assignment={0: [A, B]}, configs={"min.insync.replicas": "1"})
    s.watch(g, t)
    s.produce(t, 100)
    sees(s, t, leader=A, isr=(A, B), log_end=100)


def run_unclean(cells: Sequence[tuple[Stage, CellSpec]]) -> None:
    """The election and the groups' return, on the cells :func:`prepare_unclean` set up."""
    if not cells:
        return
    kafka = cells[0][0].kafka
    named = _named(cells)
    try:
        kafka.stop_broker(B)  # controlled shutdown: the ISR shrinks to [A]
        _each(named, lambda s, spec, t, g: _fifty_more(s, t))
        _each(named, lambda s, spec, t, g: read_to(s, spec, g, t, 150))
        for s, _, t, g in named:
            sees_commit(s, g, t, 150)
        kafka.stop_broker(A)  # the last in-sync replica: every cell's partition is offline
        kafka.start_broker(B)  # out of sync: not eligible for a clean election
        _elect_unclean(kafka, [t for *_, t, _ in named])
        for s, _, t, _ in named:
            sees(s, t, leader=B, log_end=100)
        kafka.start_broker(A)  # rejoins as a follower and truncates to 100
    finally:
        for broker in (A, B):
            if not kafka.brokers[broker].alive():
                kafka.start_broker(broker)
    _each(named, lambda s, spec, t, g: _come_back(s, spec, t, g))


def _named(cells: Sequence[tuple[Stage, CellSpec]]) -> list[tuple[Stage, CellSpec, str, str]]:
    return [(s, spec, s.name("t"), s.name("g")) for s, spec in cells]


def _fifty_more(s: Stage, t: str) -> None:
    sees(s, t, isr=(A,))
    s.produce(t, 50, acks=1)


def _come_back(s: Stage, spec: CellSpec, t: str, g: str) -> None:
    s.produce(t, 30)
    resume(s, spec, g, t)


def _elect_unclean(kafka: SandboxCluster, topics: list[str], timeout: float = 60) -> None:
    """Retried while broker 2 is not yet registered (the controller refuses with an error)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            ops.elect_leaders(kafka, topics, "unclean")
            return
        except ops.ToolError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _each(named, work) -> None:  # type: ignore[no-untyped-def]
    if not named:
        return
    with ThreadPoolExecutor(max_workers=len(named)) as pool:
        for f in [pool.submit(work, *n) for n in named]:
            f.result()
