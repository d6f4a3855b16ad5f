"""glibc malloc arenas and the cyclic garbage collector for ``offsetguard serve``.

glibc gives each thread that allocates concurrently an arena of its own, up to 8 per core, and keeps what
is freed in each for reuse. The service allocates large, short-lived working sets (an evaluation, a
metrics snapshot, a store write) in different worker threads, so each arena ends up holding a peak's
worth of freed memory: resident memory grows by arenas, not by data. Two arenas cost no measurable
speed here (the GIL serialises Python's allocations anyway).

``MALLOC_ARENA_MAX`` set by the operator wins. Called first thing in ``serve``, before any thread
starts; the variable is also exported so processes the service starts (the metrics render worker,
when ``metrics.render_worker`` is on) inherit it.

**Large blocks** (:func:`fix_mmap_threshold`). glibc serves a block of 128 KiB or more with a mapping of
its own, handed back to the system when freed, but each such free raises that threshold to the block's
size (up to 32 MiB), so after the first few fetch buffers, snapshots and render bodies were freed, all
later ones came from the heap and their holes stayed resident: on the 20k / 2k / 50k bench cluster the
heap held 40-50 MB free beside ~50 MB in use. The threshold fixed at 128 KiB (which also stops it
moving) keeps ~10 MB free there: cold starts alternated with and without it peaked at 274 / 286 MB
against 290 / 300 and settled at ~265 MB against ~287, at the same CPU.
``MALLOC_MMAP_THRESHOLD_`` set by the operator wins (glibc has applied it before Python starts).

**Trimming** (:func:`trim`). A render of the default ``/metrics`` body at 50,000 group-partitions frees
tens of MB of large blocks that glibc keeps inside its heap, between blocks still in use, so the heap's
free part grew from ~25 to ~40 MB over three minutes. ``malloc_trim`` after each in-process render
(once per scrape) returns them: on the 20k / 2k / 50k bench cluster the service's resident memory fell
from ~360 to ~250-290 MB after a cold start's first render, and from 400-409 to 350-380 MB after a warm
start on a stale store (its first cycles catch up), at the same CPU. On a 2 s timer
it cost 0.3-0.5 CPU s per minute, and every 15 s, in the days of the render worker, it did not lower the
peak (449/482 MB against 431/475 MB).

**The garbage collector** (:func:`tune_gc`). CPython's defaults (700, 10, 10) suit small heaps: a full
collection walks every tracked object, and the detection state of a 50,000 group-partition fleet is
millions of them (range and commit histories are tuples of named tuples, which the collector never
untracks). At the defaults a full collection ran more than once per evaluation and took ~40 % of
detection's CPU (``bench/evaluate``-style loop, 20k partitions: 0.19 -> 0.11 CPU s per evaluation with
the thresholds below, 0.11 with the collector off). Reference counting frees everything that is not a
cycle at once, so larger thresholds keep no more memory, only cyclic garbage a little longer: the young
generation is collected every 300,000 net new objects, a full collection is considered every 60 million.
The young threshold sits above what one evaluation, store write or render of a 50,000 group-partition
fleet holds at once (100-300k tracked objects: a cycle's observations and maps, freed when it ends): at
100,000 a young collection landed in most cycles and walked that working set, ~0.19 CPU s each on a
slow day's machine, 8 a minute (~9 % of the running service's CPU, measured with ``gc.callbacks``
timing each collection's thread CPU on the 20k / 2k / 50k bench cluster); at 300,000 none happened in
3 minutes of steady state. Over 3.5 minutes at 20k / 50k scraped every 10 s: the service's collections
took 7.8 of its 78 CPU s at 100,000 and 0.8 of 69 at 300,000, the render worker's 2.6 of 25 and 1.4 of
23. What still reaches the threshold is what outlives its cycle: state growth and cyclic garbage (~1,500
objects in the service's first 100 s, mostly imports and startup, little after).
What the service has imported and built before it starts is frozen out of the collections (``gc.freeze``).
``OFFSETGUARD_GC_THRESHOLD`` (three integers, ``"700,10,10"`` for CPython's defaults) set by the operator
wins; it is exported for the render worker too.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import os
import sys
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter numbers
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, fixed
GC_THRESHOLD = (300_000, 20, 10)
GC_ENV = "OFFSETGUARD_GC_THRESHOLD"


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def trim() -> bool:
    """Hand the free pages inside glibc's heaps back to the system (``malloc_trim(0)``); False where
    there is no glibc. A few milliseconds at the service's heap size: call it after a large, short-lived
    working set was freed (an in-process ``/metrics`` render), not on a timer."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def limit_arenas(arenas: int = ARENAS) -> int | None:
    """Cap glibc's malloc arenas at ``arenas`` (or the operator's ``MALLOC_ARENA_MAX``); the cap in
    force, or None where it cannot be set (not Linux/glibc)."""
    return _mallopt(M_ARENA_MAX, "MALLOC_ARENA_MAX", arenas)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> int | None:
    """Serve blocks of ``threshold`` bytes or more (or the operator's ``MALLOC_MMAP_THRESHOLD_``) with
    mappings of their own, returned to the system when freed, and stop glibc raising the threshold;
    the threshold in force, or None where it cannot be set (not Linux/glibc)."""
    return _mallopt(M_MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_", threshold)


def _mallopt(param: int, name: str, default: int) -> int | None:
    """glibc's ``param`` set to ``default`` or to the operator's value of ``name`` (the environment
    variable glibc reads at start, exported so that processes the service starts inherit it); the value
    in force, or None where it cannot be set."""
    libc = _libc()
    if libc is None:
        return None
    chosen = _operators(name, int, default, "a number")
    if libc.mallopt(param, chosen) != 1:
        return None
    os.environ[name] = str(chosen)
    return chosen


def tune_gc(threshold: tuple[int, int, int] = GC_THRESHOLD) -> tuple[int, int, int]:
    """Set the collector's thresholds (``threshold``, or the operator's ``OFFSETGUARD_GC_THRESHOLD``),
    export them, and freeze what exists so far out of every later collection. Returns what is in force."""
    chosen = _operators(GC_ENV, _thresholds, threshold, "three non-negative integers")
    gc.collect()  # garbage made so far is not frozen with the rest
    gc.freeze()
    gc.set_threshold(*chosen)
    os.environ[GC_ENV] = ",".join(str(x) for x in chosen)
    return chosen


def _thresholds(text: str) -> tuple[int, int, int]:
    parts = tuple(int(x) for x in text.split(","))
    if len(parts) != 3 or any(x < 0 for x in parts):
        raise ValueError(text)
    return parts[0], parts[1], parts[2]


def _operators(name: str, parse: Callable[[str], T], default: T, what: str) -> T:
    """The operator's value of the environment variable ``name`` parsed, else ``default`` (a value that
    does not parse is refused with a warning)."""
    wanted = os.environ.get(name)
    if not wanted:
        return default
    try:
        return parse(wanted)
    except ValueError:
        log.warning("%s=%r is not %s: using %s", name, wanted, what, default)
        return default
