import subprocess
import sys
import textwrap

import pytest

from service import memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc arenas")

# Threads allocating at the same time, then glibc's own count of its heaps (malloc_info's <heap> elements).
PROBE = textwrap.dedent(
    """
    import ctypes, os, sys, tempfile, threading
    from service.memory import limit_arenas
    cap = limit_arenas() if sys.argv[1] == "limit" else None
    barrier = threading.Barrier(8)
    def work():
        barrier.wait()
        for _ in range(200):
            junk = [bytearray(256) for _ in range(500)]
            del junk
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    path = tempfile.mktemp()
    f = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(f))
    libc.fclose(ctypes.c_void_p(f))
    print(cap, os.environ.get("MALLOC_ARENA_MAX"), open(path).read().count("<heap nr="))
    """
)


def _run(probe: str, *args: str, env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    """``probe`` in a fresh interpreter (glibc reads its malloc variables at start)."""
    return subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True, env=env, timeout=60
    )


def _probe(mode: str, env: dict[str, str] | None = None) -> list[str]:
    return _run(PROBE, mode, env=env).stdout.split()


def test_limit_arenas_caps_glibc_heaps_and_exports_the_setting() -> None:
    cap, exported, heaps = _probe("limit", env={"PATH": "/usr/bin:/bin"})
    assert (cap, exported) == ("2", "2")
    assert int(heaps) <= 2
    _, _, unlimited = _probe("none", env={"PATH": "/usr/bin:/bin"})
    assert int(unlimited) > 2  # what the cap prevents: a heap per concurrently allocating thread


def test_limit_arenas_the_operators_value_wins() -> None:
    cap, exported, heaps = _probe("limit", env={"PATH": "/usr/bin:/bin", "MALLOC_ARENA_MAX": "3"})
    assert (cap, exported) == ("3", "3") and int(heaps) <= 3


# A freed 4 MB block (mapped at start) raises glibc's threshold to 4 MB unless it is fixed: is the
# next 1 MB block a mapping of its own (returned on free) or carved from the heap?
MMAP_PROBE = textwrap.dedent(
    """
    import ctypes, os, sys
    from service.memory import fix_mmap_threshold
    chosen = fix_mmap_threshold() if sys.argv[1] == "fix" else None
    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                    "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    big = bytes(4_000_000)
    del big
    before = libc.mallinfo2().hblkhd
    block = bytes(1_000_000)
    print(chosen, os.environ.get("MALLOC_MMAP_THRESHOLD_"), libc.mallinfo2().hblkhd - before >= 1_000_000)
    """
)


def _mmap_probe(mode: str, env: dict[str, str]) -> list[str]:
    return _run(MMAP_PROBE, mode, env=env).stdout.split()


def test_fix_mmap_threshold_keeps_large_blocks_out_of_the_heap_and_exports_the_setting() -> None:
    assert _mmap_probe("fix", {"PATH": "/usr/bin:/bin"}) == ["131072", "131072", "True"]
    assert _mmap_probe("none", {"PATH": "/usr/bin:/bin"}) == ["None", "None", "False"]  # what it prevents


def test_fix_mmap_threshold_the_operators_value_wins() -> None:
    env = {"PATH": "/usr/bin:/bin", "MALLOC_MMAP_THRESHOLD_": "8000000"}
    assert _mmap_probe("fix", env) == ["8000000", "8000000", "False"]  # 1 MB is below the operator's 8 MB


def test_fix_mmap_threshold_without_glibc_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_libc", lambda: None)
    assert memory.fix_mmap_threshold() is None


GC_PROBE = textwrap.dedent(
    """
    import gc, os
    from service.memory import tune_gc
    chosen = tune_gc()
    force = ",".join(map(str, gc.get_threshold()))
    exported = os.environ["OFFSETGUARD_GC_THRESHOLD"]
    print(",".join(map(str, chosen)), force, exported, gc.get_freeze_count() > 1000)
    """
)


def _gc_probe(env: dict[str, str]) -> tuple[list[str], str]:
    out = _run(GC_PROBE, env=env)
    return out.stdout.split(), out.stderr


def test_tune_gc_raises_the_thresholds_freezes_what_exists_and_exports_them() -> None:
    (chosen, force, exported, frozen), _ = _gc_probe({"PATH": "/usr/bin:/bin"})
    assert chosen == force == exported == "300000,20,10"
    assert frozen == "True"  # the imports are out of every later collection


def test_tune_gc_the_operators_thresholds_win_and_a_bad_value_is_refused_with_a_warning() -> None:
    (chosen, force, exported, _), _ = _gc_probe(
        {"PATH": "/usr/bin:/bin", "OFFSETGUARD_GC_THRESHOLD": "700,10,10"}
    )
    assert chosen == force == exported == "700,10,10"
    for bad in ("700,10", "a,b,c", "700,-1,10"):
        (chosen, force, _, _), err = _gc_probe({"PATH": "/usr/bin:/bin", "OFFSETGUARD_GC_THRESHOLD": bad})
        assert chosen == force == "300000,20,10"
        assert "OFFSETGUARD_GC_THRESHOLD" in err


TRIM_PROBE = textwrap.dedent(
    """
    import sys
    from service.memory import trim
    def rss():
        return int(open("/proc/self/statm").read().split()[1]) * 4096
    blocks = [bytes(1024) for _ in range(100_000)]  # ~100 MB of 1 kB blocks: glibc's heap, not pymalloc
    kept = blocks[::50]  # one in 50 stays, the last one too: the heap's top cannot shrink by itself
    kept.append(blocks[-1])
    del blocks
    freed = rss()
    done = trim()
    print(done, freed, rss())
    """
)


def test_trim_returns_the_free_pages_inside_the_heap() -> None:
    """What a render leaves: large blocks freed between blocks still in use stay resident until trimmed."""
    env = {"PATH": "/usr/bin:/bin", "MALLOC_ARENA_MAX": "1"}
    done, freed, trimmed = _run(TRIM_PROBE, env=env).stdout.split()
    assert done == "True"
    assert int(freed) - int(trimmed) > 50_000_000  # of ~98 MB freed, held resident until the trim


def test_trim_without_glibc_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_libc", lambda: None)
    assert memory.trim() is False
