"""One object per database file in this process, however the file's path is spelled (the write gate, the
alert stores' write count)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class PerFile(Generic[T]):
    """``make()``'s object for each file, made at the first ask; kept while the process runs."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: dict[str, T] = {}
        self._lock = threading.Lock()

    def of(self, path: Path) -> T:
        key = os.path.realpath(path)
        with self._lock:
            found = self._made.get(key)
            if found is None:
                found = self._made[key] = self._make()
            return found
