"""Launching the sandbox's processes from a busy, threaded process (no JVM needed: ``true`` stands in)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path

from sandbox import jvm


class _LogsWhenFreed:
    """Like py4j's connections: a finalizer that logs."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def __del__(self) -> None:
        self.logger.warning("finalized")


def _launch_with_lock_held_elsewhere(launch: object, tmp_path: Path) -> bool:
    """Run ``launch`` while another thread holds a logging handler's lock and a third thread's
    thread-local holds an object that logs through that handler when freed (what a forked child does
    to the other threads' state before it execs). True if it returned within 30 s."""
    logger = logging.getLogger(f"offsetguard.test.jvm.{id(tmp_path)}")
    handler = logging.FileHandler(tmp_path / "held.log")
    logger.addHandler(handler)
    logger.propagate = False
    holder_ready, owner_ready, release = threading.Event(), threading.Event(), threading.Event()
    local = threading.local()

    def hold() -> None:
        with handler.lock:  # type: ignore[union-attr]
            holder_ready.set()
            release.wait(60)

    def own() -> None:
        local.conn = _LogsWhenFreed(logger)
        owner_ready.set()
        release.wait(60)

    threads = [threading.Thread(target=t, daemon=True) for t in (hold, own)]
    for t in threads:
        t.start()
    holder_ready.wait(10)
    owner_ready.wait(10)
    done = threading.Event()
    launcher = threading.Thread(target=lambda: (launch(), done.set()), daemon=True)  # type: ignore[operator]
    try:
        launcher.start()
        if done.wait(30):
            return True
        _kill_forked_copies()  # a child stuck before exec would hold pytest's output open
        return False
    finally:
        release.set()
        for t in threads:
            t.join(10)
        logger.removeHandler(handler)
        handler.close()


def _kill_forked_copies() -> None:
    """SIGKILL this process's children still running its own command line (forked, never exec'd)."""
    me = os.getpid()
    own = Path("/proc/self/cmdline").read_bytes()
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if proc.name.isdigit() and ppid == me and (proc / "cmdline").read_bytes() == own:
                os.kill(int(proc.name), signal.SIGKILL)


def test_run_handler_lock_held_by_another_thread_child_still_execs(tmp_path: Path) -> None:
    result: list[int] = []
    assert _launch_with_lock_held_elsewhere(
        lambda: result.append(jvm.run(["true"], timeout=20).returncode), tmp_path
    )
    assert result == [0]


def test_spawn_handler_lock_held_by_another_thread_child_still_execs(tmp_path: Path) -> None:
    procs: list[int] = []
    launch = lambda: procs.append(jvm.spawn(["true"], tmp_path / "out.log", daemon=False).wait(20))  # noqa: E731
    assert _launch_with_lock_held_elsewhere(launch, tmp_path)
    assert procs == [0]


def test_dies_with_parent_command_sets_the_death_signal_then_execs(tmp_path: Path) -> None:
    """The wrapped command reads its own /proc status: its parent-death signal is SIGKILL (9)."""
    out = jvm.run(["python3", "-c", _READ_PDEATHSIG], timeout=20)
    assert (out.returncode, out.stdout.strip()) == (0, "9")


_READ_PDEATHSIG = (
    "import ctypes; s = ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)"
)


def test_pid_alive_an_empty_command_line_mid_exec_is_read_again(monkeypatch: object) -> None:
    """The kernel shows an empty command line while a process is inside execve (our launcher execs the
    JVM): that is not "exited" (a starting broker was reported dead while it started)."""
    views = iter([("R", ""), ("R", "java -cp lib/* kafka.Kafka /s/broker-3/node.properties")])
    monkeypatch.setattr(jvm, "_proc_view", lambda pid: next(views))  # type: ignore[attr-defined]
    monkeypatch.setattr(jvm, "EXEC_SETTLE", (0.0, 0.0))  # type: ignore[attr-defined]
    assert jvm.pid_alive(4242, "/s/broker-3/node.properties")


def test_pid_alive_gone_zombie_other_program_and_never_exec_are_not_alive(monkeypatch: object) -> None:
    monkeypatch.setattr(jvm, "EXEC_SETTLE", (0.0, 0.0))  # type: ignore[attr-defined]
    for view in (None, ("Z", ""), ("S", "python other.py"), ("S", "")):
        monkeypatch.setattr(jvm, "_proc_view", lambda pid, v=view: v)  # type: ignore[attr-defined]
        assert not jvm.pid_alive(4242, "node.properties"), view


def test_pid_alive_own_child_follows_its_exit_status_not_proc(tmp_path: Path, monkeypatch: object) -> None:
    proc = jvm.spawn(["sleep", "30"], tmp_path / "out.log", daemon=False)
    try:
        monkeypatch.setattr(jvm, "_proc_view", lambda pid: ("R", ""))  # type: ignore[attr-defined]
        assert jvm.pid_alive(proc.pid, "no such marker", proc)
        proc.kill()
        proc.wait(10)
        assert not jvm.pid_alive(proc.pid, "sleep", proc)
    finally:
        proc.kill()
        proc.wait(10)


def test_pid_alive_a_real_process_by_its_command_line(tmp_path: Path) -> None:
    proc = jvm.spawn(["sleep", "30"], tmp_path / "out.log", daemon=True)
    try:
        deadline = time.monotonic() + 10
        while "sleep 30" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert jvm.pid_alive(proc.pid, "sleep 30")
        assert not jvm.pid_alive(proc.pid, "kafka.Kafka")
    finally:
        proc.kill()
        proc.wait(10)
    assert not jvm.pid_alive(proc.pid, "sleep 30")
