"""Per-cycle memoisation of the derived views every detector reads (:func:`per_cycle`).

An evaluation runs a dozen detectors over the same ``(previous, inputs)``; each used to rebuild the
replayed commits and the current partitions from scratch (at 50,000 group-partitions that was most of an
evaluation). The views are pure functions of their arguments, which are frozen, so the result of the last
call with the *same objects* is returned again. The cache is per thread (each cluster's detection runs
in its own worker thread) and holds one entry per function: the objects it keeps alive are the current
cycle's, which the caller holds anyway.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
_LOCALS: list[threading.local] = []  # one per memoised function


def per_cycle(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn(*args)`` once per distinct tuple of argument *objects* (identity, not equality), last one kept.

    Callers must treat the result as read-only (it is shared by every detector of the cycle).
    """
    local = threading.local()
    _LOCALS.append(local)

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if kwargs:
            return fn(*args, **kwargs)
        last: tuple[tuple[Any, ...], R] | None = getattr(local, "last", None)
        if last is not None and _same(last[0], args):
            return last[1]
        out = fn(*args, **kwargs)
        local.last = (args, out)
        return out

    wrapper.memo_local = local  # type: ignore[attr-defined]
    return wrapper


def per_object(slot: Callable[[Any], Hashable]) -> Callable[[Callable[[Any], R]], Callable[[Any], R]]:
    """``fn(obj)`` once per argument *object* (identity), the last one kept across cycles in ``slot(obj)``'s
    place: for a view of an observation that outlives an evaluation (a cluster's metadata is the same
    object for its 30 s interval while offsets arrive every 5 s; ``slot`` is then its cluster). Shared by
    every thread (evaluations run on a pool of threads: a cache per thread would keep one copy per thread)
    and not forgotten by :func:`release`; what it keeps alive is each slot's latest object, which the
    caller holds anyway. Read-only results, as :func:`per_cycle`'s."""

    def decorate(fn: Callable[[Any], R]) -> Callable[[Any], R]:
        kept: dict[Hashable, tuple[Any, R]] = {}

        @functools.wraps(fn)
        def wrapper(obj: Any) -> R:
            key = slot(obj)
            last = kept.get(key)
            if last is not None and last[0] is obj:
                return last[1]
            out = fn(obj)
            kept[key] = (obj, out)  # two threads racing here both compute; either result is right
            return out

        return wrapper

    return decorate


def carry(fn: Callable[..., Any], old: tuple[Any, ...], new: tuple[Any, ...]) -> None:
    """Let ``fn``'s last result for the arguments ``old`` answer ``new`` too (this thread).

    For a caller that knows the result does not depend on what differs: the detection loop replays the
    cycle to ask for epoch ends, then adds them to the inputs (``replay`` does not read them); without
    this, the evaluation would replay the whole cycle again.
    """
    local = getattr(fn, "memo_local", None)
    last = getattr(local, "last", None)
    if local is not None and last is not None and _same(last[0], old):
        local.last = (new, last[1])


def _same(cached: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    return len(cached) == len(args) and all(a is b for a, b in zip(cached, args, strict=True))


def release() -> None:
    """Forget this thread's cached views (the end of a cycle: they hold the cycle's maps, tens of MB at
    fleet size, until the next cycle would replace them)."""
    for local in _LOCALS:
        local.__dict__.pop("last", None)
