"""The soak's group members over the four clients: Java (one JVM, ``Members.java``, classic and KIP-848
members driven over its stdin) and kafka-python, aiokafka and librdkafka (a process per member, the
ground-truth harness's :func:`tests.truth.clients.start_member`). Every member journals each record it
processed (:class:`tests.truth.records.Read`), so the soak can tell what the consumers really read.

Rewinding and pausing a member (the incidents) need a hand inside the consumer: only Java members do it.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, NamedTuple

from sandbox import jvm
from sandbox.cluster import SandboxCluster
from tests.truth.clients import Member, start_member
from tests.truth.records import Read, load_reads

SOURCE = Path(__file__).with_name("Members.java")
JVM_OPTS = ("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
JAVA = ("java-classic", "java-consumer")  # the JVM's members: group.protocol classic / consumer (KIP-848)


class Rewound(NamedTuple):
    topic: str
    partition: int
    old: int
    new: int


class JavaMembers:
    """``start``/``stop``/``rewind``/``pause`` Java members by id; :meth:`close` stops them and the JVM."""

    def __init__(self, cluster: SandboxCluster, log: Path, journal: Path) -> None:
        args = [cluster.bootstrap_servers, str(journal)]
        cmd = jvm.java_command(cluster.lib, str(SOURCE), args, JVM_OPTS)
        self.journal = journal
        self._log = log.open("w")
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1
        )
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, daemon=True, name="soak-members")
        self._reader.start()

    def _read(self) -> None:
        out: IO[str] | None = self._proc.stdout
        assert out is not None
        for line in out:
            self._log.write(line)
            self._log.flush()
            self._lines.put(line.strip())

    def _send(self, line: str) -> None:
        if self._proc.poll() is not None:
            raise RuntimeError(f"the members' JVM exited with {self._proc.returncode}")
        assert self._proc.stdin is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()

    def _expect(self, member: str, event: str, timeout: float) -> list[str]:
        """The words after ``<member> <event>`` of the next such line (others are skipped)."""
        while True:
            try:
                words = self._lines.get(timeout=timeout).split()
            except queue.Empty:
                raise RuntimeError(f"member {member}: no '{event}' in {timeout:.0f} s") from None
            if words[:1] == [member] and words[1:2] and words[1].endswith("failed"):
                raise RuntimeError(" ".join(words))
            if words[:2] == [member, event]:
                return words[2:]

    def start(self, member: str, group: str, topic: str, protocol: str) -> None:
        self._send(f"start {member} {group} {topic} {protocol}")
        self._expect(member, "started", 60)

    def stop(self, member: str) -> None:
        self._send(f"stop {member}")
        self._expect(member, "stopped", 60)

    def rewind(self, member: str, n: int) -> Rewound:
        self._send(f"rewind {member} {n}")
        topic, partition, old, new = self._expect(member, "rewound", 60)
        return Rewound(topic, int(partition), int(old), int(new))

    def pause(self, member: str) -> None:
        self._send(f"pause {member}")
        self._expect(member, "paused", 60)

    def close(self) -> None:
        if self._proc.poll() is None and self._proc.stdin is not None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._log.close()


class Members:
    """Every member of the soak by id, whatever its client. A Python member whose process ended by itself
    (a library that gave up after the whole cluster was down) is started again by :meth:`revive`, as its
    deployment would restart it."""

    def __init__(self, cluster: SandboxCluster, workdir: Path) -> None:
        self._cluster = cluster
        self._dir = workdir / "members"
        self._dir.mkdir(parents=True, exist_ok=True)
        self._java = JavaMembers(cluster, workdir / "members.log", self._dir / "java.jsonl")
        self._python: dict[str, Member] = {}
        self._starts = 0
        self.running: dict[str, tuple[str, str, str]] = {}  # member -> (group, topic, client)
        self.revived: list[str] = []

    def start(self, member: str, group: str, topic: str, client: str) -> None:
        self.start_all([(member, group, topic, client)])

    def start_all(self, members: Sequence[tuple[str, str, str, str]]) -> None:
        """Start each ``(member, group, topic, client)`` of ``members``: every process first, then the wait
        for each one's first assignment (the Python clients' start overlaps)."""
        started: list[tuple[str, Member]] = []
        try:
            for member, group, topic, client in members:
                if client in JAVA:
                    self._java.start(member, group, topic, client.removeprefix("java-"))
                else:
                    self._starts += 1
                    out = self._dir / f"{member}-{self._starts}.jsonl"
                    started.append(
                        (member, start_member(client, self._cluster.bootstrap_servers, group, topic, out))
                    )
                self.running[member] = (group, topic, client)
            for member, m in started:
                m.wait_assigned(90, nonempty=False)
                self._python[member] = m
        finally:  # a member that failed to start is stopped with the rest by close(): none is left behind
            for member, m in started:
                self._python.setdefault(member, m)

    def stop(self, member: str) -> None:
        if member in self._python:
            self._python.pop(member).stop()
        else:
            self._java.stop(member)
        self.running.pop(member, None)

    def restart(self, member: str) -> None:
        group, topic, client = self.running[member]
        self.stop(member)
        self.start(member, group, topic, client)

    def revive(self) -> list[str]:
        """Start again every Python member whose process ended; their ids."""
        dead = [member for member, m in self._python.items() if not m.alive()]
        for member in dead:
            self._python.pop(member)
            self.start(member, *self.running[member])
        self.revived.extend(dead)
        return dead

    def _java_member(self, member: str) -> str:
        if self.running[member][2] not in JAVA:
            raise ValueError(f"{member}: only a Java member can be rewound or paused")
        return member

    def rewind(self, member: str, n: int) -> Rewound:
        """The member commits ``n`` below its committed offset on its first partition and reads on."""
        return self._java.rewind(self._java_member(member), n)

    def pause(self, member: str) -> None:
        """The member stays in its group (heartbeats, polls) but reads and commits nothing more."""
        self._java.pause(self._java_member(member))

    def reads(self) -> list[Read]:
        """Every record any member processed, from the journals."""
        out = load_reads(self._java.journal)
        for path in sorted(self._dir.glob("m*.jsonl")):
            out.extend(load_reads(path))
        return out

    def close(self) -> None:
        for member in list(self._python):
            self._python.pop(member).stop()
        self._java.close()
