"""OffsetsTail over the in-memory FakeLog: order, skips, delivery before checkpoint, resume, recovery."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from collectors.codec import OffsetCommit, OffsetCommitTombstone
from collectors.errors import KafkaAuthError, KafkaResponseError, KafkaUnavailableError, StoreError
from collectors.tail import OffsetsTail
from collectors.tail_model import TailEvent, TailSink
from collectors.tail_progress import Backoff
from store import Store
from store.settings import StoreSettings
from tests.collectors.tail.fakes import (
    FakeLog,
    FakeStore,
    RecordingSink,
    commit,
    corrupt,
    run_until_caught_up,
    tombstone,
    unknown,
    until,
)

C = "c1"


def _tail(log: FakeLog, sink: TailSink, store: FakeStore | Store | None = None, **kw: object) -> OffsetsTail:
    kw.setdefault("checkpoint_seconds", 0.01)
    return OffsetsTail(
        C,
        log,
        sink,
        store=store,
        fetch_timeout_ms=1,
        topic_poll_seconds=0.01,
        backoff=Backoff(0.001, 0.01),
        **kw,  # type: ignore[arg-type]
    )


async def test_tail_records_with_gaps_emitted_in_offset_order_per_partition() -> None:
    log = FakeLog(
        {
            0: [commit(0, "g", "t", 0, 5), commit(3, "g", "t", 0, 6), commit(9, "g", "t", 0, 7)],
            1: [tombstone(2, "h", "t", 1), commit(4, "h", "t", 1, 1, ts=77)],
            2: [],
        },
        chunk=1,
    )
    sink = RecordingSink()

    await run_until_caught_up(_tail(log, sink))

    assert sink.offsets(0) == [0, 3, 9]
    assert sink.offsets(1) == [2, 4]
    first = sink.events[0]
    assert (first.cluster, first.partition, first.offset) == (C, 0, 0)
    by_offset = {(e.partition, e.offset): e for e in sink.events}
    assert by_offset[(1, 2)].record == OffsetCommitTombstone(1, "h", "t", 1)
    record = by_offset[(1, 4)].record
    assert isinstance(record, OffsetCommit)
    assert (record.group, record.topic, record.partition, record.offset) == ("h", "t", 1, 1)
    assert by_offset[(1, 4)].timestamp == 77


async def test_tail_decode_error_counted_and_partition_continues() -> None:
    log = FakeLog({0: [commit(0, "g", "t", 0, 1), corrupt(1), commit(2, "g", "t", 0, 2)]}, chunk=3)
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 2]
    figures = tail.figures()
    assert (figures.decode_errors, figures.records_total, figures.events_total) == (1, 3, 2)


async def test_tail_none_key_counted_as_decode_error() -> None:
    log = FakeLog({0: [corrupt(0)._replace(key=None), commit(1, "g", "t", 0, 1)]})
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert (tail.figures().decode_errors, sink.offsets(0)) == (1, [1])


async def test_tail_unknown_record_counted_not_emitted() -> None:
    log = FakeLog({0: [unknown(0), commit(1, "g", "t", 0, 1)]})
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [1]
    assert tail.figures().unknown_records == 1


async def test_tail_positions_saved_only_after_sink_returned() -> None:
    log = FakeLog({p: [commit(o, "g", "t", p, o) for o in range(10)] for p in range(2)}, chunk=3)
    store = FakeStore()
    seen_saved: list[tuple[int, int, int]] = []

    async def check(events: Sequence[TailEvent]) -> None:
        await asyncio.sleep(0.02)  # let a checkpoint fall due while the sink holds the batch
        for e in events:
            seen_saved.append((e.partition, e.offset, store.positions.get((C, e.partition), -1)))

    tail = _tail(log, RecordingSink(check=check), store)
    await run_until_caught_up(tail)

    assert seen_saved, "sink never called"
    assert all(saved <= offset for _, offset, saved in seen_saved), seen_saved
    assert store.positions == {(C, 0): 10, (C, 1): 10}
    assert store.writes < 2 * 10  # only changed positions, not every record


async def test_tail_sink_failure_redelivers_from_last_delivered_position() -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(6)]}, chunk=2)
    store = FakeStore()
    failures = [RuntimeError("detector down")]

    async def check(events: Sequence[TailEvent]) -> None:
        if events[0].offset == 2 and failures:
            raise failures.pop()

    sink = RecordingSink(check=check)
    tail = _tail(log, sink, store)
    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 1, 2, 3, 4, 5]
    assert log.starts == 2 and log.seeks[0] == 2  # the new session resumed where delivery stopped
    assert store.positions[(C, 0)] == 6


async def test_tail_resume_from_stored_positions_emits_only_new(tmp_path: Path) -> None:
    store = Store.open(StoreSettings(path=tmp_path / "og.db"))
    try:
        logs = {p: [commit(o, "g", "t", p, o) for o in range(4)] for p in range(2)}
        first = RecordingSink()
        await run_until_caught_up(_tail(FakeLog({p: list(r) for p, r in logs.items()}), first, store))
        logs[0].append(commit(4, "g", "t", 0, 4))
        logs[1].append(commit(7, "g", "t", 1, 7))
        second = RecordingSink()

        await run_until_caught_up(_tail(FakeLog(logs), second, store))

        assert len(first.events) == 8
        assert [(e.partition, e.offset) for e in second.events] == [(0, 4), (1, 7)]
        assert {p.partition: p.next_offset for p in store.tail_positions(C)} == {0: 5, 1: 8}
    finally:
        store.close()


async def test_tail_first_start_latest_emits_only_new_records() -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(5)]})
    sink = RecordingSink()
    tail = _tail(log, sink, FakeStore(), start_from="latest")
    tail.start()
    try:
        await until(lambda: tail.caught_up)
        log.append(0, commit(5, "g", "t", 0, 5))
        await until(lambda: sink.offsets(0) == [5])
    finally:
        await tail.stop()


async def test_tail_caught_up_false_until_start_end_offsets_reached() -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(4)], 1: []}, chunk=1)
    release = asyncio.Event()

    async def check(events: Sequence[TailEvent]) -> None:
        if events[0].offset == 2:
            await release.wait()

    tail = _tail(log, RecordingSink(check=check))
    tail.start()
    try:
        await until(lambda: tail.progress.delivered.get(0) == 2)
        assert tail.caught_up is False
        assert tail.figures().lag == {0: 2, 1: 0}
        release.set()
        await until(lambda: tail.caught_up)
    finally:
        await tail.stop()


async def test_tail_live_only_while_caught_up_and_reading() -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(4)]}, chunk=1)
    release = asyncio.Event()

    async def check(events: Sequence[TailEvent]) -> None:
        if events[0].offset == 2:
            await release.wait()

    # a long backoff, so that the state after a fetch error is seen
    tail = OffsetsTail(C, log, RecordingSink(check=check), fetch_timeout_ms=1, backoff=Backoff(60.0, 60.0))
    assert tail.live() is False  # not started
    tail.start()
    try:
        await until(lambda: tail.progress.delivered.get(0) == 2)
        assert (tail.state, tail.caught_up, tail.live()) == ("running", False, False)  # catching up
        release.set()
        await until(tail.live)
        log.fetch_errors.append(KafkaUnavailableError("broker 2 down", cluster=C))
        await until(lambda: tail.state == "backing_off")
        assert (tail.caught_up, tail.live()) == (True, False)  # caught up once, not reading now
    finally:
        await tail.stop()
    assert (tail.state, tail.live()) == ("stopped", False)


async def test_tail_trailing_control_records_still_reach_caught_up() -> None:
    # Offsets 2 and 3 are a commit marker / aborted batch: no record, but the end offset is 4.
    log = FakeLog({0: [commit(0, "g", "t", 0, 0), commit(1, "g", "t", 0, 1)]}, ends={0: 4})
    store = FakeStore()
    tail = _tail(log, RecordingSink(), store)

    await run_until_caught_up(tail)

    assert store.positions[(C, 0)] == 4


async def test_tail_fetch_errors_logged_counted_and_tail_continues() -> None:
    errors = [
        KafkaUnavailableError("broker 2 down", cluster=C),
        KafkaResponseError("NOT_LEADER", error_code=6, error_name="NOT_LEADER_OR_FOLLOWER", cluster=C),
    ]
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(3)]}, fetch_errors=list(errors))
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 1, 2]
    figures = tail.figures()
    assert figures.fetch_errors == 2
    assert figures.last_error is not None and "NOT_LEADER" in figures.last_error
    assert log.starts == 1  # fetch errors do not restart the session


async def test_tail_fetch_not_authorized_restarts_the_session_with_a_new_client() -> None:
    """READ on __consumer_offsets taken away, then granted again: the old client would keep refusing."""
    refused = KafkaAuthError(
        "fetch failed: TopicAuthorizationFailedError", cluster=C, topic="__consumer_offsets"
    )
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(3)]}, fetch_errors=[refused])
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 1, 2]  # nothing lost or repeated across the new session
    assert log.starts == 2 and log.stops >= 1
    assert tail.figures().last_error is not None and "TopicAuthorizationFailed" in tail.figures().last_error


async def test_tail_cancellation_let_out_by_the_client_retries_the_session() -> None:
    """aiokafka lets a CancelledError of its own out of a fetch when a broker's connection closes: the
    tail starts a new session (it would otherwise end, reading nothing more, unseen)."""
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(3)]})
    log.fetch_errors = [asyncio.CancelledError()]  # type: ignore[list-item]
    sink = RecordingSink()
    tail = _tail(log, sink)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 1, 2]
    assert log.starts == 2
    assert tail.figures().last_error is not None and "CancelledError" in tail.figures().last_error


async def test_tail_stop_after_its_task_ended_cancelled_from_inside_saves_positions() -> None:
    """The client's close lets a CancelledError out while the broker goes away at shutdown: stop()
    returns (the service's shutdown goes on) and the delivered positions are saved."""

    class CancellingClose(FakeLog):
        async def stop(self) -> None:
            await super().stop()
            raise asyncio.CancelledError()

    log = CancellingClose({0: [commit(o, "g", "t", 0, o) for o in range(3)]})
    store = FakeStore()
    sink = RecordingSink()
    tail = _tail(log, sink, store, checkpoint_seconds=3600)
    tail.start()
    await until(lambda: sink.offsets(0) == [0, 1, 2])

    await tail.stop()

    assert tail.state == "stopped"
    assert store.positions == {(C, 0): 3}


async def test_tail_stop_cancelled_by_its_caller_still_raises() -> None:
    log = FakeLog({0: [commit(0, "g", "t", 0, 0)]})
    sink = RecordingSink()
    tail = _tail(log, sink)
    tail.start()
    await until(lambda: sink.offsets(0) == [0])

    async def cancelled_stop() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await tail.stop()

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(cancelled_stop())


async def test_tail_start_failures_retried_until_connected() -> None:
    log = FakeLog(
        {0: [commit(0, "g", "t", 0, 0)]},
        start_errors=[KafkaUnavailableError("no broker", cluster=C)] * 2,
    )
    sink = RecordingSink()

    await run_until_caught_up(_tail(log, sink))

    assert (log.starts, sink.offsets(0)) == (3, [0])
    assert log.stops >= 3  # every failed session released its client


async def test_tail_missing_topic_waits_then_reads_it() -> None:
    log = FakeLog({0: [commit(0, "g", "t", 0, 0)]}, missing_topic_calls=2)
    sink = RecordingSink()
    tail = _tail(log, sink)
    tail.start()
    try:
        await until(lambda: sink.offsets(0) == [0])
    finally:
        await tail.stop()
    assert tail.caught_up is True
    assert tail.state == "stopped"


async def test_tail_stop_saves_delivered_positions_without_checkpoint_due() -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(3)]})
    store = FakeStore()

    await run_until_caught_up(_tail(log, RecordingSink(), store, checkpoint_seconds=3600))

    assert store.positions == {(C, 0): 3}


async def test_tail_store_failure_logged_and_retried_next_checkpoint() -> None:
    class FlakyStore(FakeStore):
        fail = 1

        def set_tail_position(self, cluster: str, partition: int, next_offset: int, at: float) -> None:
            if self.fail:
                self.fail -= 1
                raise StoreError("disk full", cluster=cluster)
            super().set_tail_position(cluster, partition, next_offset, at)

    store = FlakyStore()
    tail = _tail(FakeLog({0: [commit(0, "g", "t", 0, 0)]}), RecordingSink(), store)
    tail.start()
    try:
        await until(lambda: store.positions == {(C, 0): 1})  # saved by a later checkpoint
    finally:
        await tail.stop()

    assert store.fail == 0 and tail.figures().last_checkpoint_at is not None


@pytest.mark.parametrize("records", [0, 25])
async def test_tail_figures_count_records_and_events(records: int) -> None:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(records)]}, chunk=10)
    tail = _tail(log, RecordingSink())

    await run_until_caught_up(tail)

    figures = tail.figures().as_dict()
    assert (figures["records_total"], figures["events_total"]) == (records, records)
    assert figures["lag_total"] == 0 and figures["caught_up"] is True
    assert figures["partitions"] == 1


async def test_tail_records_out_of_scope_dropped_before_their_value_is_decoded_and_counted() -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter
    from tests.collectors.codec.encode import group_key, offset_key
    from tests.collectors.tail.fakes import Rec

    garbage = b"\x00\x03\xff"  # a value that would not decode: proves it is never read
    log = FakeLog(
        {
            0: [
                commit(0, "g", "t", 0, 5),
                Rec(1, 1_000, offset_key("console-consumer-7", "t", 0), garbage),
                Rec(2, 1_000, offset_key("g", "__internal", 0), garbage),
                Rec(3, 1_000, offset_key("g", "audit", 0), garbage),
                Rec(4, 1_000, group_key(2, "console-consumer-7"), garbage),
                tombstone(5, "console-consumer-7", "t", 0),
                commit(6, "g", "t", 0, 6),
            ]
        }
    )
    sink = RecordingSink()
    scope = Scope.from_patterns(
        NameFilter(exclude=["console-consumer-.*"]), NameFilter(exclude=["__.*"]), [("g", "audit")]
    )
    tail = _tail(log, sink, scope=scope)

    await run_until_caught_up(tail)

    assert sink.offsets(0) == [0, 6]
    figures = tail.figures()
    assert (figures.out_of_scope_records, figures.decode_errors, figures.records_total) == (5, 0, 7)
    assert figures.as_dict()["out_of_scope_records"] == 5
    assert tail.progress.delivered[0] == 7  # dropped records still move the position


class _TimedLog(FakeLog):
    """Remembers when each fetch that brought records returned (loop time)."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.fetched_at: list[float] = []

    async def fetch(self, timeout_ms: int, max_records: int) -> dict[int, Sequence[object]]:  # type: ignore[override]
        out = dict(await super().fetch(timeout_ms, max_records))
        if out:
            self.fetched_at.append(asyncio.get_running_loop().time())
        return out


async def _caught_up_then_appended(log: _TimedLog, sink: RecordingSink, count: int, **kw: object) -> None:
    """Start a tail on the empty ``log``, append ``count`` commits once it is caught up, wait for them."""
    tail = _tail(log, sink, **kw)
    tail.start()
    try:
        await until(lambda: tail.caught_up)
        for i in range(count):
            log.append(0, commit(i, "g", "t", 0, i))
        await until(lambda: len(sink.events) == count)
    finally:
        await tail.stop()


async def test_tail_caught_up_small_batches_fetched_at_most_once_per_batch_interval() -> None:
    log, sink = _TimedLog({0: []}, chunk=1), RecordingSink()

    await _caught_up_then_appended(log, sink, 4, batch_interval_seconds=0.1)

    assert sink.offsets(0) == [0, 1, 2, 3]  # everything, in order
    assert len(log.fetched_at) == 4
    gaps = [b - a for a, b in zip(log.fetched_at, log.fetched_at[1:], strict=False)]
    assert min(gaps) >= 0.1 - 0.005  # the loop's clock may round a timer down by its resolution


async def test_tail_caught_up_full_batches_fetched_without_pause() -> None:
    """A caught-up tail falling behind (a full batch of ``max_batch_records``) fetches again at once."""
    log, sink = _TimedLog({0: []}, chunk=2), RecordingSink()

    await _caught_up_then_appended(log, sink, 6, batch_interval_seconds=60.0, max_batch_records=2)

    assert sink.offsets(0) == [0, 1, 2, 3, 4, 5]
    assert log.fetched_at[-1] - log.fetched_at[0] < 5.0  # three full batches, no 60 s pause between


async def test_tail_catching_up_small_batches_fetched_without_pause() -> None:
    """Until it reached the end offsets seen at start, the tail reads on at once (``/readyz`` waits)."""
    log = _TimedLog({0: [commit(i, "g", "t", 0, i) for i in range(4)]}, chunk=1)
    sink = RecordingSink()

    await run_until_caught_up(_tail(log, sink, batch_interval_seconds=60.0))

    assert sink.offsets(0) == [0, 1, 2, 3]
    assert log.fetched_at[-1] - log.fetched_at[0] < 5.0


async def test_tail_stop_during_batch_interval_returns_and_saves_positions() -> None:
    log, store, sink = FakeLog({0: []}, chunk=1), FakeStore(), RecordingSink()
    tail = _tail(log, sink, store, batch_interval_seconds=60.0, checkpoint_seconds=60.0)
    tail.start()
    await until(lambda: tail.caught_up)
    log.append(0, commit(0, "g", "t", 0, 1))
    await until(lambda: len(sink.events) == 1)
    loop = asyncio.get_running_loop()
    started = loop.time()

    await tail.stop()

    assert loop.time() - started < 5.0  # the pause ends with stop, not after 60 s
    assert store.positions[(C, 0)] == 1
