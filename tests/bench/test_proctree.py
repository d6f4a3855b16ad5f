"""bench.proctree's CPU by thread: a real Python process whose one busy thread is named as the service's
worker threads are; the CPU is found on that kind, not on the idle main thread."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from bench import proctree

BUSY = """
import threading, time
def spin():
    end = time.monotonic() + 60
    while time.monotonic() < end:
        sum(range(1000))
threading.Thread(target=spin, name="asyncio_0", daemon=True).start()
print("started", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not proctree.profile_available(), reason="py-spy is not installed")
def test_thread_kinds_busy_worker_thread_counted_as_worker_main_idle() -> None:
    proc = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        before, t0 = proctree.thread_cpu(proc.pid), time.monotonic()
        time.sleep(1.5)
        after = proctree.thread_cpu(proc.pid)
        kinds = proctree.thread_kinds(proc.pid, before, after, (time.monotonic() - t0) / 60)
    finally:
        proc.kill()
        proc.wait()
    assert len(before) == len(after) == 2  # the main thread and the busy one
    workers = "worker threads (detection, store writes, state saves)"
    main = "event loop (collectors, tail, HTTP)"
    assert set(kinds) == {workers, main}, kinds
    assert kinds[workers] > 10 * kinds[main], kinds  # it spun; the main thread slept
