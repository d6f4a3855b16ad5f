import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from alerts.state import CommitKey, PartitionKey
from collectors.errors import StoreError
from service.detection import state_codec
from service.detection.loop import DetectionLoop
from service.detection.snapshots import SnapshotRateLimit, SnapshotTrigger
from service.detection.tail_sink import DetectionTailSink
from service.settings import DetectionSettings
from service.state import LatestObservations
from store.alert_records import Alert
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.alerts.builders import committed, metadata, offsets
from tests.service.detection.builders import C, T, before_format_5, carried, commit_event

FAST = DetectionSettings(debounce_seconds=0.1, state_save_seconds=3600)


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _loop(alerts: AlertStore, latest: LatestObservations | None = None, **kw: object) -> DetectionLoop:
    return DetectionLoop(
        C, FAST, latest=latest or LatestObservations(), alerts=alerts, tail_live=lambda: True, **kw
    )  # type: ignore[arg-type]


def _now_ms() -> int:
    return int(time.time() * 1000)


async def _wait_firing(alerts: AlertStore, timeout: float = 3.0) -> float:
    t0 = time.monotonic()
    while not await asyncio.to_thread(alerts.firing, C):
        assert time.monotonic() - t0 < timeout, "no alert stored"
        await asyncio.sleep(0.01)
    return time.monotonic() - t0


async def test_detection_loop_tail_rewind_stored_within_debounce(alerts: AlertStore) -> None:
    loop = _loop(alerts)
    await loop.start()
    try:
        t = _now_ms()
        await DetectionTailSink(loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
        elapsed = await _wait_firing(alerts)
    finally:
        await loop.stop()
    [a] = alerts.firing(C)
    assert (a.kind, a.severity, a.cause, a.group, a.topic, a.partition) == (
        "offset_rewind",
        "critical",
        "unknown",
        "g",
        T,
        0,
    )
    assert a.magnitude["messages_replayed"] == 200
    assert elapsed < 0.6


async def test_detection_loop_fired_alert_logged_with_its_context(
    alerts: AlertStore, caplog: pytest.LogCaptureFixture
) -> None:
    loop = _loop(alerts)
    await loop.start()
    try:
        t = _now_ms()
        with caplog.at_level(logging.INFO, logger="service.detection.loop"):
            await DetectionTailSink(loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
            await _wait_firing(alerts)
    finally:
        await loop.stop()
    [a] = alerts.firing(C)
    [line] = [r for r in caplog.records if getattr(r, "alert_id", None) == a.id]
    assert line.levelname == "WARNING"
    context = {k: getattr(line, k) for k in ("kind", "cluster", "group", "topic", "partition", "transition")}
    assert context == {
        "kind": "offset_rewind",
        "cluster": C,
        "group": "g",
        "topic": T,
        "partition": 0,
        "transition": "fired",
    }


async def test_detection_loop_polled_rewind_evaluated_on_observation(alerts: AlertStore) -> None:
    latest = LatestObservations()
    loop = DetectionLoop(C, FAST, latest=latest, alerts=alerts)
    await loop.start()
    try:
        now = time.time()
        for at, value in ((now - 10, 500), (now - 5, 300)):
            for obs in (offsets(at, {(T, 0): (0, 1000)}), committed(at, {("g", T, 0): value})):
                await latest.put(obs)
                await loop.observe(obs)
            await asyncio.sleep(0.05)
        await _wait_firing(alerts)
    finally:
        await loop.stop()
    [a] = alerts.firing(C)
    assert (a.kind, a.magnitude["messages_replayed"], a.evidence["source"]) == ("offset_rewind", 200, "poll")


async def test_detection_loop_restart_reloads_state_redelivery_not_duplicated(alerts: AlertStore) -> None:
    t = _now_ms()
    events = [commit_event(500, 1, t - 20), commit_event(300, 2, t)]
    first = _loop(alerts)
    await first.start()
    await DetectionTailSink(first).on_events(events)
    await _wait_firing(alerts)
    await first.stop()

    second = _loop(alerts)
    await second.start()
    assert second.state.tail_positions == {7: 2}
    await DetectionTailSink(second).on_events([*events, commit_event(310, 3, t + 10)])
    await second.evaluate_now()
    await second.stop()
    [a] = alerts.list().alerts
    assert (a.status, a.occurrences, a.magnitude_total["messages_replayed"]) == ("firing", 1, 200)


async def test_detection_loop_launch_returns_before_the_state_is_read_events_wait_for_it(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _now_ms()
    await _saved_with_commit(alerts, 500, t - 20)
    reading = asyncio.Event()
    release = asyncio.Event()
    second = _loop(alerts)
    load = alerts.load_state

    def slow_load(cluster: str):  # type: ignore[no-untyped-def]
        asyncio.run_coroutine_threadsafe(_set(reading), loop)
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result(5)
        return load(cluster)

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(alerts, "load_state", slow_load)
    second.launch()  # returns at once
    await asyncio.wait_for(reading.wait(), 5)
    # a rewind arriving while the state is read: kept, then judged against the saved offset (500)
    await DetectionTailSink(second).on_events([commit_event(300, 2, t)])
    assert second.state.commits == {} and await asyncio.to_thread(alerts.firing, C) == ()
    release.set()
    await _wait_firing(alerts)
    await second.stop()
    [a] = alerts.list().alerts
    assert a.magnitude["messages_replayed"] == 200


async def _set(event: asyncio.Event) -> None:
    event.set()


async def test_detection_loop_reads_a_state_saved_whole_by_the_release_before_and_saves_it_in_parts(
    alerts: AlertStore,
) -> None:
    """An upgraded store holds a format-3 body (one JSON text, no parts, each partition's row with its
    own observation time): it is read, and the next save writes today's format (the small members as
    the body, the large sections in parts, the partitions' times beside them)."""
    await _saved_with_commit(alerts, 500, _now_ms() - 20)
    saved = alerts.load_state(C)
    assert saved is not None and saved.format == state_codec.FORMAT == 5 and saved.parts
    state = carried(state_codec.load(saved.body, saved.format, saved.parts))
    old = json.dumps(before_format_5(json.loads(state_codec.dumps(state))))
    alerts.save_state(C, old, 3, saved.saved_at)  # as the release before wrote it
    assert alerts.load_state(C) == (saved.saved_at, 3, old, ())

    second = _loop(alerts)
    await second.start()
    assert second.state == state
    await second.stop()
    again = alerts.load_state(C)
    assert again is not None and again.format == 5 and {name for name, _ in again.parts} >= {"commits"}
    assert state_codec.load(again.body, again.format, again.parts) == state


async def _saved_with_commit(alerts: AlertStore, offset: int, at_ms: int) -> None:
    """A loop that saw one commit of ``offset`` and saved its state."""
    first = _loop(alerts)
    await first.start()
    await DetectionTailSink(first).on_events([commit_event(offset, 1, at_ms)])
    await first.evaluate_now()
    await first.stop()


async def test_detection_loop_stopped_before_its_state_is_read_keeps_the_saved_one(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _now_ms()
    await _saved_with_commit(alerts, 500, t)
    saved = alerts.load_state(C)

    failing = _loop(alerts)
    calls = 0

    def unreadable(cluster: str) -> None:
        nonlocal calls
        calls += 1
        raise StoreError("database is locked")

    load = alerts.load_state
    monkeypatch.setattr(alerts, "load_state", unreadable)
    failing.launch()
    await DetectionTailSink(failing).on_events([commit_event(300, 2, t + 1)])
    while calls == 0:
        await asyncio.sleep(0.01)
    await failing.stop()  # retrying the read: nothing evaluated, nothing saved over the state
    monkeypatch.setattr(alerts, "load_state", load)
    assert alerts.load_state(C) == saved
    assert await asyncio.to_thread(alerts.firing, C) == ()
    never = _loop(alerts)
    await never.stop()  # never launched: saves nothing either
    assert alerts.load_state(C) == saved


async def test_detection_loop_critical_rewind_snapshot_id_on_alert(alerts: AlertStore) -> None:
    calls: list[tuple[str, str]] = []

    def dump(group: str, trigger: str) -> str:
        calls.append((group, trigger))
        return "snap-1"

    snapshots = SnapshotTrigger(dump, alerts, SnapshotRateLimit(600, 10))
    loop = _loop(alerts, snapshots=snapshots)
    await loop.start()
    t = _now_ms()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
    await _wait_firing(alerts)
    await loop.stop()  # drains the snapshot under way
    [a] = alerts.firing(C)
    assert calls == [("g", a.id)]
    assert a.snapshot_id == "snap-1"


async def test_detection_loop_undone_rewind_same_alert_reclassified(alerts: AlertStore) -> None:
    loop = _loop(alerts)
    await loop.start()
    t = _now_ms()
    sink = DetectionTailSink(loop)
    await sink.on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
    await loop.evaluate_now()
    await sink.on_events([commit_event(520, 3, t + 10)])
    await loop.evaluate_now()
    await loop.stop()
    [a] = alerts.list().alerts
    assert (a.cause, a.occurrences, a.magnitude_total["messages_replayed"]) == ("rebalance_recommit", 1, 200)
    assert [t.transition for t in alerts.transitions(a.id)] == ["fired", "reclassified"]


async def test_detection_loop_store_closed_events_kept_for_retry(tmp_path: Path) -> None:
    alerts = AlertStore.open(StoreSettings(path=tmp_path / "og.db"))
    loop = _loop(alerts)
    t = _now_ms()
    await loop.add_events([e for e in ()])  # nothing queued: no-op
    await DetectionTailSink(loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
    alerts.close()
    assert await loop.evaluate_now() == ()
    assert len(loop._pending) == 2 and loop.state.commits == {}


def _degraded_loop(
    alerts: AlertStore, latest: LatestObservations, clock: list[float], job: object
) -> DetectionLoop:
    from service.detection.inputs import CollectorHealth

    settings = DetectionSettings(
        debounce_seconds=0.1, state_save_seconds=3600, collector_failure_grace_seconds=120
    )
    health = CollectorHealth(lambda: [job], stale_after_intervals=3)  # type: ignore[list-item]
    return DetectionLoop(C, settings, latest=latest, alerts=alerts, health=health, clock=lambda: clock[0])


async def _partial_offsets(latest: LatestObservations, at: float) -> None:
    from collectors.model import Failure, OffsetsObservation

    failure = Failure("broker", "2", "KafkaUnavailableError", "broker 2 unreachable")
    await latest.put(OffsetsObservation(C, at, (), (failure,)))


async def test_detection_loop_partial_failures_shorter_than_grace_no_collector_failure(
    alerts: AlertStore,
) -> None:
    from service.scheduler import CollectorStatus as JobStatus

    latest, clock = LatestObservations(), [1000.0]
    job = JobStatus("offsets", C, 1.0, last_success_at=1000.0, partial_failures=1, partial_streak=2)
    loop = _degraded_loop(alerts, latest, clock, job)
    for t in (1000.0, 1060.0, 1119.0):  # degraded for 119 s
        clock[0] = job.last_success_at = t
        await _partial_offsets(latest, t)
        await loop.evaluate_now()
    job.partial_failures = job.partial_streak = 0  # the broker is back: the spell ends
    clock[0] = job.last_success_at = 1125.0
    await loop.evaluate_now()
    clock[0] = job.last_success_at = 1200.0
    job.partial_failures, job.partial_streak = 1, 2  # another broker restarts: a new spell, from here
    await _partial_offsets(latest, 1200.0)
    await loop.evaluate_now()
    assert not alerts.list(kind="collector_failure").alerts


async def test_detection_loop_partial_failures_past_grace_collector_failure_fires(alerts: AlertStore) -> None:
    from service.scheduler import CollectorStatus as JobStatus

    latest, clock = LatestObservations(), [1000.0]
    job = JobStatus("offsets", C, 1.0, last_success_at=1000.0, partial_failures=1, partial_streak=2)
    loop = _degraded_loop(alerts, latest, clock, job)
    for t in (1000.0, 1060.0, 1121.0):
        clock[0] = job.last_success_at = t
        await _partial_offsets(latest, t)
        await loop.evaluate_now()
    [alert] = alerts.list(kind="collector_failure").alerts
    assert (alert.severity, alert.started_at) == ("warning", 1121.0)
    for t in (1122.0, 1123.0, 1124.0):  # evaluations without a failing observation: still degraded
        clock[0] = t
        await loop.evaluate_now()
    assert alerts.get(alert.id).status == "firing"  # type: ignore[union-attr]


async def test_detection_loop_one_slow_partial_run_with_a_restart_spell_no_collector_failure(
    alerts: AlertStore,
) -> None:
    """The 60-minute soak: configs (5-minute interval) had one partial run (a topic deleted under it), and
    a broker rolling restart made the offsets collector partial for 65 s within those 5 minutes. Two
    spells, not one of 5 minutes: nothing past the grace. A second partial configs run is lasting."""
    from service.detection.inputs import CollectorHealth
    from service.scheduler import CollectorStatus as JobStatus

    latest, clock = LatestObservations(), [1000.0]
    configs = JobStatus("configs", C, 300.0, last_success_at=1000.0, partial_failures=1, partial_streak=1)
    offsets = JobStatus("offsets", C, 5.0, last_success_at=1000.0)
    settings = DetectionSettings(
        debounce_seconds=0.1, state_save_seconds=3600, collector_failure_grace_seconds=120
    )
    health = CollectorHealth(lambda: [configs, offsets], stale_after_intervals=3)
    loop = DetectionLoop(C, settings, latest=latest, alerts=alerts, health=health, clock=lambda: clock[0])
    await _partial_configs(latest, 1000.0)
    for t in range(1000, 1300, 5):
        clock[0] = offsets.last_success_at = float(t)
        restarting = 1060 <= t <= 1125
        offsets.partial_failures = offsets.partial_streak = offsets.partial_streak + 1 if restarting else 0
        if restarting:
            await _partial_offsets(latest, float(t))
        await loop.evaluate_now()
    assert not alerts.list(kind="collector_failure").alerts

    # its next runs still cannot see the topic: lasting, counted from the second; the third reports it
    for run, at in enumerate((1300.0, 1600.0), start=2):
        clock[0] = configs.last_success_at = at
        configs.partial_streak = run
        await _partial_configs(latest, at)
        await loop.evaluate_now()
        assert len(alerts.list(kind="collector_failure").alerts) == (run == 3)
    [alert] = alerts.list(kind="collector_failure").alerts
    assert (alert.severity, alert.started_at) == ("warning", 1600.0)


async def _partial_configs(latest: LatestObservations, at: float) -> None:
    from collectors.model import ConfigsObservation, Failure

    failure = Failure("topic", "gone", "KafkaResponseError", "UNKNOWN_TOPIC_OR_PARTITION")
    await latest.put(ConfigsObservation(C, at, (), failures=(failure,)))


async def test_detection_loop_partial_observation_before_status_updated_still_held(
    alerts: AlertStore,
) -> None:
    from service.scheduler import CollectorStatus as JobStatus

    latest, clock = LatestObservations(), [1000.0]
    # the scheduler sets partial_failures after its sinks ran: detection may see the observation first
    job = JobStatus("offsets", C, 1.0, last_success_at=990.0, partial_failures=0)
    loop = _degraded_loop(alerts, latest, clock, job)
    await _partial_offsets(latest, 1000.0)
    await loop.evaluate_now()
    assert not alerts.list(kind="collector_failure").alerts


async def _slow_loop_after_one(
    alerts: AlertStore, offset: int
) -> tuple[DetectionLoop, DetectionTailSink, int]:
    """A started loop with a 30 s minimum interval, fed through a tail sink, that has evaluated one
    commit at ``offset`` (at ``t`` ms, returned); the caller stops it."""
    slow = DetectionSettings(
        debounce_seconds=0.1, state_save_seconds=3600, min_evaluation_interval_seconds=30
    )
    loop = DetectionLoop(C, slow, latest=LatestObservations(), alerts=alerts, tail_live=lambda: True)
    await loop.start()
    sink = DetectionTailSink(loop)
    t = _now_ms()
    try:
        await sink.on_events([commit_event(offset, 1, t)])
        while loop.evaluations < 1:
            await asyncio.sleep(0.01)
    except BaseException:
        await loop.stop()
        raise
    return loop, sink, t


@pytest.mark.parametrize(
    "evaluated, queued",
    [(500, 600), (100, 500)],  # 300 below the evaluated offset / below only the one still queued
)
async def test_detection_loop_rewind_not_held_back_by_the_minimum_interval(
    alerts: AlertStore, evaluated: int, queued: int
) -> None:
    loop, sink, t = await _slow_loop_after_one(alerts, evaluated)
    try:
        await sink.on_events([commit_event(queued, 2, t + 1)])  # progress: waits for the interval
        await asyncio.sleep(0.3)
        assert loop.evaluations == 1
        await sink.on_events([commit_event(300, 3, t + 2)])  # a rewind: evaluated at once
        await _wait_firing(alerts)  # within 3 s: not held for the 30 s interval
    finally:
        await loop.stop()
    [a] = alerts.firing(C)
    assert (a.kind, a.evidence["old_offset"], a.evidence["new_offset"]) == ("offset_rewind", queued, 300)


async def test_detection_loop_progress_and_other_observations_wait_for_the_next_offsets_observation(
    alerts: AlertStore,
) -> None:
    paced = DetectionSettings(
        debounce_seconds=0.05,
        state_save_seconds=3600,
        min_evaluation_interval_seconds=0,
        offsets_wait_seconds=30,
    )
    latest = LatestObservations()
    loop = DetectionLoop(C, paced, latest=latest, alerts=alerts, tail_live=lambda: True)
    await loop.start()
    sink = DetectionTailSink(loop)
    t, now = _now_ms(), time.time()
    try:
        first = offsets(now - 5, {(T, 0): (0, 1000)})
        await latest.put(first)
        await loop.observe(first)
        while loop.evaluations < 1:
            await asyncio.sleep(0.01)
        await sink.on_events([commit_event(500, 1, t)])  # progress
        polled = committed(now - 1, {("g", T, 0): 500})
        await latest.put(polled)
        await loop.observe(polled)
        await asyncio.sleep(0.5)
        assert loop.evaluations == 1  # held for the next offsets observation
        second = offsets(now, {(T, 0): (0, 1200)})
        await latest.put(second)
        await loop.observe(second)
        t0 = time.monotonic()
        while loop.evaluations < 2:  # at once, not when the 30 s wait ends
            assert time.monotonic() - t0 < 10, "the offsets observation did not evaluate"
            await asyncio.sleep(0.01)
        # the one evaluation took the commit, the poll and the new log range together
        assert loop.state.commits[CommitKey("g", T, 0)].offset == 500
        assert loop.state.committed_polled_at == now - 1
        assert loop.state.partitions[PartitionKey(T, 0)].log_end == 1200
        await sink.on_events([commit_event(300, 2, t + 1)])  # a rewind: not held
        await _wait_firing(alerts)
    finally:
        await loop.stop()
    assert loop.evaluations == 3


async def test_detection_loop_firing_retention_risk_kept_through_a_blind_spell(alerts: AlertStore) -> None:
    latest, clock = LatestObservations(), [1000.0]
    loop = DetectionLoop(
        C, FAST, latest=latest, alerts=alerts, clock=lambda: clock[0], blind_gap_seconds=30.0
    )

    async def cycle(at: float) -> None:  # retention moves the log start 10/s; the group stopped at 50_000
        clock[0] = at
        await latest.put(offsets(at, {(T, 0): (int(at - 1000) * 10, 100_000)}))
        await latest.put(committed(at, {("g", T, 0): 50_000}))
        await loop.evaluate_now()

    for at in range(1000, 1100, 10):
        await cycle(at)

    def risks() -> list[Alert]:
        return [a for a in alerts.firing(C) if a.kind == "retention_risk"]

    [alert] = risks()
    for at in range(1100, 1400, 10):  # every broker down: evaluations without observations
        clock[0] = at
        await loop.evaluate_now()
    # back: under a minute since the log start's first move after the spell (at 1410), no forecast yet
    for at in range(1400, 1470, 10):
        await cycle(at)
        assert [a.id for a in risks()] == [alert.id]
    await cycle(1470)  # a minute since that move: forecast again, from rates measured after it
    [again] = risks()
    assert again.id == alert.id and again.magnitude["seconds_to_loss"] == pytest.approx(4530)


async def test_detection_loop_rate_min_span_seconds_shortens_the_settle_after_a_blind_spell(
    alerts: AlertStore,
) -> None:
    settings = FAST.model_copy(update={"rate_min_span_seconds": 20.0})
    latest, clock = LatestObservations(), [1000.0]
    loop = DetectionLoop(
        C, settings, latest=latest, alerts=alerts, clock=lambda: clock[0], blind_gap_seconds=30.0
    )

    async def cycle(at: float) -> None:  # retention moves the log start 10/s; the group stopped at 50_000
        clock[0] = at
        await latest.put(offsets(at, {(T, 0): (int(at - 1000) * 10, 100_000)}))
        await latest.put(committed(at, {("g", T, 0): 50_000}))
        await loop.evaluate_now()

    def risks() -> list[Alert]:
        return [a for a in alerts.firing(C) if a.kind == "retention_risk"]

    for at in range(1000, 1030, 10):  # 20 s of history suffice for a rate
        await cycle(at)
    [alert] = risks()
    for at in range(1030, 1400, 10):  # every broker down: evaluations without observations
        clock[0] = at
        await loop.evaluate_now()
    for at in range(1400, 1430, 10):  # settling: 20 s since the log start's first move after the spell
        await cycle(at)
        assert [a.id for a in risks()] == [alert.id]
    await cycle(1430)
    await cycle(1440)  # the next sweep (every 30 s) forecasts again (60 s: not before 1470)
    [again] = risks()
    assert again.id == alert.id and again.magnitude["seconds_to_loss"] == pytest.approx(4560)


async def test_detection_loop_replays_a_cycle_once_with_epoch_ends(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import alerts.commits as commits

    replays: list[object] = []
    real = commits._apply_poll

    def counting(*args: object) -> None:
        replays.append(args[1])
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(commits, "_apply_poll", counting)
    latest = LatestObservations()
    loop = DetectionLoop(C, FAST, latest=latest, alerts=alerts, epoch_ends=lambda commits, meta: ())
    await latest.put(metadata(1, {(T, 0): (1, 3, (1, 2))}))
    await latest.put(offsets(1, {(T, 0): (0, 100)}))
    await latest.put(committed(1, {("g", T, 0): 50}))
    await loop.evaluate_now()
    assert len(replays) == 1


async def test_detection_loop_full_queue_evaluated_at_once_tail_held_until_then(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At ``MAX_PENDING_EVENTS`` queued the tail waits, and the queue is evaluated without waiting for
    the minimum interval (a catch-up's memory stays bounded, and it is not slowed to one batch per
    interval)."""
    monkeypatch.setattr("service.detection.loop.MAX_PENDING_EVENTS", 3)
    loop, sink, t = await _slow_loop_after_one(alerts, 10)
    try:
        await sink.on_events([commit_event(20 + i, 2 + i, t + 1 + i) for i in range(3)])  # now full
        assert loop.evaluations == 1
        # the tail is held until the full queue is taken, within 3 s: not for the 30 s interval
        await asyncio.wait_for(sink.on_events([commit_event(30, 9, t + 9)]), 3)
        while loop.evaluations < 2:
            await asyncio.sleep(0.01)
    finally:
        await loop.stop()
