"""The soak's group members: one JVM (``Members.java``, the Java client) running classic and KIP-848
members, driven over its stdin."""

from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, NamedTuple

from service.sandbox import jvm
from service.sandbox.cluster import SandboxCluster

SOURCE = Path(__file__).with_name("Members.java")
JVM_OPTS = ("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


class Rewound(NamedTuple):
    topic: str
    partition: int
    old: int
    new: int


class Members:
    """``start``/``stop``/``rewind`` members by id; :meth:`close` stops them all and the JVM."""

    def __init__(self, cluster: SandboxCluster, log: Path) -> None:
        cmd = jvm.java_command(cluster.lib, str(SOURCE), [cluster.bootstrap_servers], JVM_OPTS)
        self._log = log.open("w")
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1
        )
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, daemon=True, name="soak-members")
        self._reader.start()
        self.running: dict[str, tuple[str, str, str]] = {}  # member -> (group, topic, protocol)

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
        self.running[member] = (group, topic, protocol)

    def stop(self, member: str) -> None:
        self._send(f"stop {member}")
        self._expect(member, "stopped", 60)
        self.running.pop(member, None)

    def restart(self, member: str) -> None:
        group, topic, protocol = self.running[member]
        self.stop(member)
        self.start(member, group, topic, protocol)

    def rewind(self, member: str, n: int) -> Rewound:
        """The member commits ``n`` below its committed offset on its first partition and reads on."""
        self._send(f"rewind {member} {n}")
        topic, partition, old, new = self._expect(member, "rewound", 60)
        return Rewound(topic, int(partition), int(old), int(new))

    def pause(self, member: str) -> None:
        """The member stays in its group (heartbeats, polls) but reads and commits nothing more."""
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
