"""What a running process tree costs, read from ``/proc``: CPU seconds, resident memory, and where the CPU
goes (a ``py-spy`` profile summarised by module).

Used by ``bench/service`` for the service (its metrics worker included) and for a peer it runs beside it.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/{pid}/stat`` after the command name (``pid`` may be ``"PID/task/TID"``);
    None when the process (or thread) is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    return raw[raw.rindex(")") + 2 :].split()


def descendants(root: int) -> list[int]:
    """``root`` and every live process below it."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                children[int(fields[1])].append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def cpu_seconds(root: int) -> float:
    """User + system CPU of the tree: live processes, plus the children already reaped by them."""
    total = 0
    for pid in descendants(root):
        fields = _stat(pid)
        if fields is not None:  # utime, stime, cutime, cstime are fields 14-17 (index 11-14 here)
            total += sum(int(x) for x in fields[11:15])
    return total / TICKS


def thread_cpu(pid: int) -> dict[int, float]:
    """User + system CPU seconds of each live thread of ``pid`` (by thread id)."""
    out: dict[int, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        fields = _stat(f"{pid}/task/{tid}")
        if fields is not None:  # else gone meanwhile
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICKS
    return out


# a Python thread's name -> what it does in offsetguard serve (its kind)
_KINDS = (
    ("MainThread", "event loop (collectors, tail, HTTP)"),
    ("asyncio_", "worker threads (detection, store writes, state saves)"),
    ("kafka-io", "Kafka client I/O thread (requests, answers decoded)"),
    ("metrics-render", "/metrics render"),
)


def thread_kinds(
    pid: int, before: dict[int, float], after: dict[int, float], minutes: float
) -> dict[str, float]:
    """CPU seconds per minute between ``before`` and ``after`` (:func:`thread_cpu`) by kind of thread, the
    threads named by ``py-spy dump``; empty when py-spy cannot name them (not a Python process)."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists() or minutes <= 0:
        return {}
    dump = subprocess.run([str(spy), "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
    names = {int(m[1], 0): m[2] for m in re.finditer(r"^Thread (\S+) \(.*?\): \"(.*?)\"", dump.stdout, re.M)}
    if not names:
        return {}
    kinds: collections.Counter[str] = collections.Counter()
    for tid, seconds in after.items():
        name = names.get(tid, "")
        kind = next((k for prefix, k in _KINDS if name.startswith(prefix)), "other threads")
        kinds[kind] += (seconds - before.get(tid, 0.0)) / minutes
    return {k: round(v, 2) for k, v in kinds.most_common()}


def rss_bytes(root: int) -> int:
    """Resident memory of the tree now."""
    total = 0
    for pid in descendants(root):
        fields = _stat(pid)
        if fields is not None:
            total += int(fields[21]) * PAGE
    return total


class RssPeak:
    """Samples the tree's resident memory every ``period`` s in a thread; ``peak`` is the largest sum."""

    def __init__(self, root: int, period: float = 0.5) -> None:
        self.root = root
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(period,), daemon=True)
        self._thread.start()

    def _run(self, period: float) -> None:
        while not self._stop.wait(period):
            self.peak = max(self.peak, rss_bytes(self.root))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^:()]+):\d+\)$")
OWN = ("alerts", "collectors", "service", "pipeline", "sandbox", "drills", "cli", "store")


def component(file: str) -> str | None:
    """``alerts/retention.py`` -> ``alerts.retention``; None for files outside offsetguard's packages."""
    parts = Path(file).with_suffix("").parts
    for i, part in enumerate(parts):
        if part in OWN and i + 1 < len(parts):
            return ".".join(parts[i:])
    return None


def summarise(collapsed: str, top: int = 25) -> dict[str, Any]:
    """A ``py-spy --format raw`` profile by offsetguard module: each sample counts for the innermost
    offsetguard frame on its stack (self time of that module and the libraries it called), and the
    innermost frames themselves (leaf functions)."""
    by_module: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        owner = "(outside offsetguard: event loop, clients, idle threads)"
        for frame in reversed(frames):
            m = FRAME.match(frame)
            mod = component(m.group("file")) if m else None
            if mod is not None:
                owner = mod
                break
        by_module[owner] += n
        leaves[frames[-1]] += n
    share = {k: round(100.0 * v / total, 1) for k, v in by_module.most_common(top)} if total else {}
    leaf = {k: round(100.0 * v / total, 1) for k, v in leaves.most_common(top)} if total else {}
    return {"samples": total, "percent_by_module": share, "percent_by_leaf": leaf}


def profile_available() -> bool:
    return Path(sys.executable).with_name("py-spy").exists()


def profile(pid: int, seconds: float, out: Path, rate: int = 50) -> dict[str, Any] | None:
    """Sample the tree with py-spy for ``seconds``; None (and a note) when py-spy is not usable here."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        print("py-spy not installed: no profile", flush=True)
        return None
    cmd = [str(spy), "record", "--pid", str(pid), "--subprocesses", "--nonblocking"]
    cmd += ["-r", str(rate), "-d", str(int(seconds)), "-f", "raw", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if proc.returncode != 0 or not out.exists():
        print(f"py-spy failed ({proc.returncode}): {proc.stderr.strip()[-300:]}", flush=True)
        return None
    return summarise(out.read_text())


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = _stat(pid)
        if fields is None or fields[0] == "Z":
            return True
        time.sleep(0.1)
    return False
