"""The store's history writes held while the first picture is made (service.held_writes)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest

from service.held_writes import HeldWrites


class Recorder:
    """A store sink that records what it wrote, ``slow`` taking 50 ms each, ``broken`` failing."""

    def __init__(self, *, slow: bool = False, broken: object = None) -> None:
        self.written: list[object] = []
        self.slow = slow
        self.broken = broken

    async def __call__(self, observation: object) -> None:
        if self.slow:
            await asyncio.sleep(0.05)
        if observation == self.broken:
            raise RuntimeError("a bug in the writer")
        self.written.append(observation)


async def _until(condition: object, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "never happened"
        await asyncio.sleep(0.01)


async def _holding_a_and_b(write: Recorder, until: Callable[[], Awaitable[object]]) -> HeldWrites:
    """A hold armed with ``until``, handed "a" then "b" (each call returns at once)."""
    held = HeldWrites(write)
    held.hold(until)
    await held("a")
    await held("b")
    return held


async def test_unarmed_writes_at_once() -> None:
    write = Recorder()
    held = HeldWrites(write)
    await held("a")
    assert write.written == ["a"] and held.held == 0


async def test_armed_holds_until_released_then_writes_in_arrival_order_and_later_ones_after() -> None:
    write = Recorder(slow=True)
    served = asyncio.Event()
    held = await _holding_a_and_b(write, served.wait)
    await asyncio.sleep(0.1)
    assert write.written == [] and held.held == 2  # the runs returned: nothing written yet
    served.set()
    await _until(lambda: held.held < 2)  # released: the first held one being written
    await held("c")  # after the held ones, though they are still being written
    assert write.written == ["a", "b", "c"] and held.held == 0
    await held("d")
    assert write.written == ["a", "b", "c", "d"]


async def test_a_failed_wait_or_write_does_not_stop_the_writes(caplog: pytest.LogCaptureFixture) -> None:
    write = Recorder(broken="a")

    async def failing() -> None:
        raise RuntimeError("the render worker is gone")

    with caplog.at_level(logging.WARNING, logger="service.held_writes"):
        await _holding_a_and_b(write, failing)
        await _until(lambda: write.written == ["b"])
    assert "the wait failed" in caplog.text and "a held store write failed" in caplog.text


async def test_flush_releases_and_finishes_the_held_writes_then_writes_go_through() -> None:
    write = Recorder(slow=True)
    never = asyncio.Event()
    held = await _holding_a_and_b(write, never.wait)
    await held.flush()  # the runtime's stop: before the store closes
    assert write.written == ["a", "b"] and held.held == 0
    held.hold(never.wait)  # released for good: a second hold changes nothing
    await held("c")
    assert write.written == ["a", "b", "c"]
    await held.flush()  # nothing held: returns at once
