"""The active replica's writers (service.ha.writers): where a promoted tail resumes, what a standby writes,
and the order of promotion and step-down, with recording fakes behind the runtime's seams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from collectors.errors import FencedError
from service.ha.writers import ActiveWriters, GatedPositions, gated_sink


@dataclass(frozen=True)
class Row:
    partition: int
    next_offset: int


class Positions:
    def __init__(self, rows: dict[int, int]) -> None:
        self.rows = rows
        self.written: list[tuple[str, int, int]] = []

    def tail_positions(self, cluster: str) -> list[Row]:
        return [Row(p, o) for p, o in self.rows.items()]

    def set_tail_position(self, cluster: str, partition: int, next_offset: int, updated_at: float) -> None:
        self.written.append((cluster, partition, next_offset))


def _offsets(positions: GatedPositions) -> dict[int, int]:
    return {row.partition: row.next_offset for row in positions.tail_positions("c")}


def test_gated_positions_resume_after_what_the_state_evaluated_else_the_checkpoint() -> None:
    store = Positions({0: 100, 1: 200, 2: 300})
    positions = GatedPositions(store, lambda: True, lambda: {0: 40, 1: 250})
    # 0: the checkpoint ran ahead of the last state save (replayed from 41); 1: the state saw past it
    assert _offsets(positions) == {0: 41, 1: 251, 2: 300}


def test_gated_positions_without_saved_state_read_from_start() -> None:
    positions = GatedPositions(Positions({0: 100}), lambda: True, dict)
    assert _offsets(positions) == {}  # the tail then seeks to tail.start_from, as at a first start


def test_gated_positions_written_only_while_writes_allowed() -> None:
    store = Positions({})
    allowed = True
    positions = GatedPositions(store, lambda: allowed)
    positions.set_tail_position("c", 0, 5, 1.0)
    allowed = False
    with pytest.raises(FencedError):
        positions.set_tail_position("c", 0, 6, 2.0)
    assert store.written == [("c", 0, 5)]


async def test_gated_sink_passes_observations_only_while_writes_allowed() -> None:
    seen: list[Any] = []

    async def sink(observation: Any) -> None:
        seen.append(observation)

    allowed = False
    gated = gated_sink(sink, lambda: allowed)
    await gated("standby")
    allowed = True
    await gated("active")
    assert seen == ["active"]


class Calls:
    def __init__(self) -> None:
        self.log: list[str] = []


class FakeTail:
    def __init__(self, calls: Calls, cluster: str) -> None:
        self.calls, self.cluster, self.caught_up = calls, cluster, False

    def start(self) -> None:
        self.calls.log.append(f"tail:start:{self.cluster}")

    async def stop(self) -> None:
        self.calls.log.append(f"tail:stop:{self.cluster}")


class FakeDetection:
    def __init__(self, calls: Calls, cluster: str) -> None:
        self.calls, self.cluster = calls, cluster
        self.held: Callable[[], bool] | None = None

    def hold(self, until: Callable[[], bool], seconds: float) -> None:
        self.held = until
        self.calls.log.append("detection:hold")

    async def start(self) -> None:
        self.calls.log.append("detection:loaded")

    async def halt(self) -> None:
        self.calls.log.append("detection:halt")

    async def stop(self) -> None:
        self.calls.log.append("detection:stop")

    def tail_stopping(self) -> None:
        self.calls.log.append("detection:tail_stopping")


class FakeNotifier:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def start(self) -> None:
        self.calls.log.append("notify:start")

    async def halt(self) -> None:
        self.calls.log.append("notify:halt")

    async def stop(self) -> None:
        self.calls.log.append("notify:stop")


def _writers(calls: Calls, tails: list[Any]) -> tuple[ActiveWriters, FakeDetection]:
    detection = FakeDetection(calls, "c")
    writers = ActiveWriters(
        tails=tails,
        make_tails=[lambda: FakeTail(calls, "c")],  # type: ignore[list-item,return-value]
        detections=[detection],  # type: ignore[list-item]
        notifier=FakeNotifier(calls),  # type: ignore[arg-type]
        refresh=lambda: calls.log.append("store:refresh"),
    )
    return writers, detection


async def test_active_writers_promote_state_first_then_fresh_tail_then_dispatcher() -> None:
    calls, tails = Calls(), [FakeTail(Calls(), "c")]
    old = tails[0]
    old.caught_up = True  # the previous promotion's tail, caught up then
    writers, detection = _writers(calls, tails)
    await writers.promote(2)
    assert calls.log == [
        "store:refresh",
        "detection:hold",
        "detection:loaded",
        "tail:start:c",
        "notify:start",
    ]
    assert tails[0] is not old
    assert detection.held is not None and detection.held() is False  # the new tail has not caught up
    tails[0].caught_up = True
    assert detection.held() is True


async def test_active_writers_demote_saves_nothing_retire_stops_cleanly() -> None:
    calls, tails = Calls(), []
    writers, _ = _writers(calls, tails)
    await writers.promote(1)
    calls.log.clear()
    await writers.demote()
    assert calls.log == ["notify:halt", "tail:stop:c", "detection:halt"]
    calls.log.clear()
    await writers.promote(3)
    calls.log.clear()
    await writers.retire()
    # told before its tail stops: what it evaluates at stop is judged with the tail as it was
    assert calls.log == ["detection:tail_stopping", "tail:stop:c", "detection:stop", "notify:stop"]
