"""Memoisation of a view of an observation that outlives an evaluation (:func:`per_object`).

What one evaluation shares is derived once and handed on (:mod:`alerts.view`); this is for what stays the
same across evaluations: a cluster's metadata is one object for its 30 s interval while offsets arrive
every 5 s, and its index is built once for all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

R = TypeVar("R")


def per_object(
    slot: Callable[[Any], Hashable], by: Callable[[Any], Any] = lambda obj: obj
) -> Callable[[Callable[[Any], R]], Callable[[Any], R]]:
    """``fn(obj)`` once per argument *object* (identity), the last one kept across cycles in ``slot(obj)``'s
    place: for a view of an observation that outlives an evaluation (a cluster's metadata is the same
    object for its 30 s interval while offsets arrive every 5 s; ``slot`` is then its cluster). ``by``:
    the part of ``obj`` whose identity decides when ``fn`` reads only that part (a metadata observation's
    topics, handed again by the collector while no topic changes: one build for many observations). Shared by
    every thread (evaluations run on a pool of threads: a cache per thread would keep one copy per thread);
    what it keeps alive is each slot's latest object, which the caller holds anyway. Callers must treat
    the result as read-only (it is shared)."""

    def decorate(fn: Callable[[Any], R]) -> Callable[[Any], R]:
        kept: dict[Hashable, tuple[Any, R]] = {}

        @functools.wraps(fn)
        def wrapper(obj: Any) -> R:
            key, part = slot(obj), by(obj)
            last = kept.get(key)
            if last is not None and last[0] is part:
                return last[1]
            out = fn(obj)
            kept[key] = (part, out)  # two threads racing here both compute; either result is right
            return out

        return wrapper

    return decorate
