"""Starting and handling one consumer of the ground-truth harness: :func:`start_member`, :class:`Member`.

Every member runs in a process of its own so a scenario can crash it (:meth:`Member.kill`, SIGKILL) or
stop it as its application would (:meth:`Member.stop`, SIGTERM: the library's clean close). Its journal
(``out``) holds one :class:`~tests.truth.records.Read` per record processed; lifecycle markers
(``started``, ``assigned``, ``revoked``, ``lost``, ``error``, ``closing``, ``closed``, ``exited``) go to
``<out>.events`` and the process's output to ``<out>.log``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Literal

from kafka import KafkaAdminClient

from sandbox import config, jvm, versions
from sandbox.cluster import SandboxCluster
from tests.truth.clients import java
from tests.truth.clients.run import BOOT, HEARTBEAT_INTERVAL_MS, SESSION_TIMEOUT_MS, ChildSpec, Events
from tests.truth.records import Journal, Read, load_reads

Client = Literal["kafka-python", "aiokafka", "librdkafka", "java-classic", "java-consumer"]
PYTHON_CLIENTS: tuple[Client, ...] = ("kafka-python", "aiokafka", "librdkafka")
JAVA_CLIENTS: tuple[Client, ...] = ("java-classic", "java-consumer")
CLIENTS: tuple[Client, ...] = (*PYTHON_CLIENTS, *JAVA_CLIENTS)
# Clients whose topic auto-creation cannot be chosen: aiokafka's metadata requests always allow it.
AUTO_CREATE_FIXED: dict[str, bool] = {"aiokafka": True}

ROOT = Path(__file__).resolve().parents[3]
STOP_TIMEOUT = 30.0


class NotApplicable(Exception):
    """This client cannot run the member asked for (the matrix shows a skipped cell with ``reason``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MemberFailed(RuntimeError):
    """The member exited, or did not get where it was waited for in time (message: its log's tail)."""


class Member:
    """A running consumer: its process, journal and markers."""

    def __init__(
        self,
        client: str,
        group: str,
        topics: list[str],
        out: Path,
        proc: subprocess.Popen[bytes],
        *,
        auto_create: bool,
        readers: Sequence[threading.Thread] = (),
    ) -> None:
        self.client = client
        self.group = group
        self.topics = topics
        self.out = out
        self.events_path = events_path(out)
        self.log_path = log_path(out)
        self.proc = proc
        self.auto_create = auto_create  # whether the member may re-create a deleted topic (effective)
        self.started_at = time.time()
        self._readers = list(readers)
        self._pos = 0
        self._seen: list[Read] = []

    def __repr__(self) -> str:
        return f"Member({self.client}, group={self.group!r}, pid={self.proc.pid}, alive={self.alive()})"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    # ------------------------------------------------------------------ ending
    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM (the library's clean close), wait up to ``timeout`` s, then SIGKILL; the exit status."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self._ended()

    def kill(self) -> int:
        """SIGKILL: a crash (no commit, no leaving the group)."""
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)
        return self._ended()

    def _ended(self) -> int:
        for t in self._readers:
            t.join(10)
        code = self.proc.returncode
        assert code is not None
        if not any(e["event"] == "exited" for e in self.events()):
            _append_event(self.events_path, "exited", returncode=code)
        return code

    # ------------------------------------------------------------------ what it did
    def reads(self) -> list[Read]:
        return load_reads(self.out)

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        with self.events_path.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.endswith("\n")]

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        with self.log_path.open(encoding="utf-8", errors="replace") as f:
            return "".join(deque(f, maxlen=lines))

    def _new_reads(self) -> list[Read]:
        """Reads journaled since the last call (complete lines only)."""
        if not self.out.exists():
            return []
        with self.out.open("rb") as f:
            f.seek(self._pos)
            chunk = f.read()
        end = chunk.rfind(b"\n") + 1
        self._pos += end
        fresh = [Read(**json.loads(line)) for line in chunk[:end].splitlines() if line]
        self._seen += fresh
        return fresh

    def wait_read(
        self, partition: int, offset: int, timeout: float = 60.0, *, topic: str | None = None
    ) -> Read:
        """The first read at or past ``offset`` on ``partition`` (of ``topic``, if given), waiting for it."""

        def hit(r: Read) -> bool:
            return r.partition == partition and r.offset >= offset and topic in (None, r.topic)

        self._new_reads()
        deadline = time.monotonic() + timeout
        while True:
            found = next((r for r in self._seen if hit(r)), None)
            if found is not None:
                return found
            exited = not self.alive()
            self._new_reads()
            if exited and not any(hit(r) for r in self._seen):
                self._fail(
                    f"exited ({self.returncode}) before reading offset {offset} of partition {partition}"
                )
            if time.monotonic() > deadline:
                self._fail(f"no read at or past offset {offset} of partition {partition} in {timeout:.0f} s")
            time.sleep(0.05)

    def wait_assigned(self, timeout: float = 60.0, *, nonempty: bool = True) -> list[tuple[str, int]]:
        """The partitions of the member's latest assignment, waiting for its first (non-empty) one."""
        deadline = time.monotonic() + timeout
        while True:
            assigned = [
                e for e in self.events() if e["event"] == "assigned" and (e["partitions"] or not nonempty)
            ]
            if assigned:
                return [(str(t), int(p)) for t, p in assigned[-1]["partitions"]]
            if not self.alive():
                self._fail(f"exited ({self.returncode}) before it was assigned partitions")
            if time.monotonic() > deadline:
                self._fail(f"no partitions assigned in {timeout:.0f} s")
            time.sleep(0.05)

    def _fail(self, what: str) -> None:
        raise MemberFailed(f"{self!r} {what}; its log's tail:\n{self.log_tail()}")


def events_path(out: Path) -> Path:
    return out.with_name(out.name + ".events")


def log_path(out: Path) -> Path:
    return out.with_name(out.name + ".log")


def _append_event(path: Path, event: str, **fields: Any) -> None:
    events = Events(path)
    try:
        events.write(event, **fields)
    finally:
        events.close()


def start_member(
    client: str,
    bootstrap: str,
    group: str,
    topics: str | Sequence[str],
    out: Path,
    *,
    reset: str = "earliest",
    mode: str = "subscribe",
    partitions: Sequence[int] | Sequence[tuple[str, int]] | None = None,
    allow_auto_create: bool = False,
    extra: dict[str, Any] | None = None,
    cluster: SandboxCluster | None = None,
) -> Member:
    """Start one consumer of ``group`` and return at once (see :meth:`Member.wait_assigned`).

    ``mode="assign"``: a standalone consumer of ``partitions`` (ints: those partitions of every topic;
    None: every partition) that commits with ``group``'s id. ``extra``: more settings for the library
    (its own key names). ``cluster``: where a Java member's jars come from (else the default release's).
    Raises :class:`NotApplicable` when the client cannot run such a member.
    """
    topic_list = [topics] if isinstance(topics, str) else list(topics)
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: one of {CLIENTS}")
    if mode not in ("subscribe", "assign"):
        raise ValueError(f"unknown mode {mode!r}: subscribe or assign")
    if reset not in ("earliest", "latest"):
        raise ValueError(f"unknown reset {reset!r}: earliest or latest")
    parts = _partitions(topic_list, partitions)
    if client in JAVA_CLIENTS and (reason := java.unsupported(topic_list)):
        raise NotApplicable(f"{client}: {reason}")
    if mode == "assign" and parts is None:
        parts = _every_partition(bootstrap, topic_list)
    out.parent.mkdir(parents=True, exist_ok=True)
    auto_create = AUTO_CREATE_FIXED.get(client, allow_auto_create)
    if client in JAVA_CLIENTS:
        return _start_java(
            client,
            bootstrap,
            group,
            topic_list,
            out,
            reset,
            parts if mode == "assign" else None,
            auto_create,
            extra,
            cluster,
        )
    spec = ChildSpec(
        client=client,
        bootstrap=bootstrap,
        group=group,
        topics=topic_list,
        out=str(out),
        events=str(events_path(out)),
        reset=reset,
        mode=mode,
        partitions=parts,
        allow_auto_create=allow_auto_create,
        extra=dict(extra or {}),
    )
    proc = jvm.spawn([sys.executable, "-c", BOOT, str(ROOT), spec.to_json()], log_path(out), daemon=False)
    return Member(client, group, topic_list, out, proc, auto_create=auto_create)


def _partitions(
    topics: list[str], partitions: Sequence[int] | Sequence[tuple[str, int]] | None
) -> list[tuple[str, int]] | None:
    if partitions is None:
        return None
    out: list[tuple[str, int]] = []
    for p in partitions:
        out += [(t, p) for t in topics] if isinstance(p, int) else [(p[0], p[1])]
    return out


def _every_partition(bootstrap: str, topics: list[str], timeout: float = 30.0) -> list[tuple[str, int]]:
    """Every partition of ``topics`` (waiting until each exists)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while True:
            found = {d["name"]: d["partitions"] for d in admin.describe_topics(topics) if not d["error_code"]}
            if all(found.get(t) for t in topics):
                return [(t, p["partition_index"]) for t in topics for p in sorted(found[t], key=_index)]
            if time.monotonic() > deadline:
                raise MemberFailed(f"no partitions for {[t for t in topics if not found.get(t)]}")
            time.sleep(0.2)
    finally:
        admin.close()


def _index(partition: dict[str, Any]) -> int:
    return int(partition["partition_index"])


def _start_java(
    client: str,
    bootstrap: str,
    group: str,
    topics: list[str],
    out: Path,
    reset: str,
    assigned: list[tuple[str, int]] | None,
    auto_create: bool,
    extra: dict[str, Any] | None,
    cluster: SandboxCluster | None,
) -> Member:
    """The console consumer (subscribed), or :data:`java.STANDALONE` for ``assigned`` partitions."""
    if cluster is not None:
        lib, log4j2 = cluster.lib, cluster.release.log4j2
    else:
        release = versions.release(None)
        lib, log4j2 = versions.ensure_jars(config.sandbox_home(), release), release.log4j2
    log = java.log_option(out.parent, log4j2)
    if assigned is not None:
        cmd = java.standalone_command(
            lib,
            log,
            client=client,
            bootstrap=bootstrap,
            group=group,
            topic=topics[0],
            partitions=[p for _, p in assigned],
            reset=reset,
            allow_auto_create=auto_create,
            extra=dict(extra or {}),
        )
    else:
        cmd = java.command(
            lib,
            log,
            client=client,
            bootstrap=bootstrap,
            group=group,
            topic=topics[0],
            reset=reset,
            allow_auto_create=auto_create,
            extra=dict(extra or {}),
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        )
    events = Events(events_path(out))
    events.write("started", command=cmd)

    def launch() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            jvm.dies_with_parent(cmd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    proc = jvm._in_launcher_thread(launch)  # forked by the long-lived launcher: PDEATHSIG stays armed
    assert proc.stdout is not None and proc.stderr is not None
    journal = Journal(out)
    readers = [
        threading.Thread(
            target=_java_records, args=(proc.stdout, journal, group, topics[0], client), daemon=True
        ),
        threading.Thread(target=_java_log, args=(proc.stderr, log_path(out), events), daemon=True),
    ]
    for t in readers:
        t.start()
    return Member(client, group, topics, out, proc, auto_create=auto_create, readers=readers)


def _java_records(stdout: IO[bytes], journal: Journal, group: str, topic: str, client: str) -> None:
    """The console consumer's stdout, a record a line, journaled as it arrives (other lines: the log)."""
    try:
        for raw in stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            parsed = java.parse_record(line)
            if parsed is not None:
                partition, offset, value = parsed
                journal.write(Read(group, topic, partition, offset, value, client, time.time()))
    finally:
        journal.close()


def _java_log(stderr: IO[bytes], path: Path, events: Events) -> None:
    """The console consumer's stderr into ``path``; its rebalance lines as markers."""
    try:
        with path.open("a", encoding="utf-8") as log:
            for raw in stderr:
                line = raw.decode("utf-8", "replace")
                log.write(line)
                log.flush()
                rebalance = java.rebalance_event(line)
                if rebalance is not None:
                    events.write(rebalance[0], partitions=rebalance[1])
                elif line.startswith("Processed a total of"):
                    events.write("closed", summary=line.strip())
    finally:
        events.close()
