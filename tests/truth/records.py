"""What the ground-truth harness records: each record a consumer processed, each message a producer had
acknowledged. One JSON object a line, appended and flushed as it happens, so a consumer killed with
SIGKILL leaves every record it had processed on disk.

Payload ids are unique per scenario (the producer writes them as the record value), so a message is known
by its payload whatever offset or topic incarnation it lands at.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO


@dataclass(frozen=True, slots=True)
class Read:
    """One record a member of ``group`` processed (``client``: which library or tool read it)."""

    group: str
    topic: str
    partition: int
    offset: int
    payload: str
    client: str
    at: float


@dataclass(frozen=True, slots=True)
class Acked:
    """One message the broker acknowledged: where it landed and in which incarnation of the topic."""

    topic: str
    topic_id: str | None
    partition: int
    offset: int
    payload: str
    at: float


class Journal:
    """An append-only JSON-lines file of :class:`Read` or :class:`Acked`, flushed after each line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, entry: Read | Acked) -> None:
        self._file.write(json.dumps(asdict(entry), separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def load_reads(path: Path) -> list[Read]:
    return [Read(**row) for row in _rows(path)]


def load_acked(path: Path) -> list[Acked]:
    return [Acked(**row) for row in _rows(path)]


def _rows(path: Path) -> Iterator[dict[str, object]]:
    """Every complete line (a line cut short by a kill is the one record not yet processed: skipped)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                yield json.loads(line)


def write_all(path: Path, entries: Iterable[Read | Acked]) -> None:
    journal = Journal(path)
    try:
        for e in entries:
            journal.write(e)
    finally:
        journal.close()
