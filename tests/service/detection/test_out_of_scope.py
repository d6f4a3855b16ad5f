"""At start, firing alerts of groups and topics now out of scope are resolved, reported and forgotten."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from collectors.scope import Scope
from collectors.settings import NameFilter
from service.detection.loop import DetectionLoop
from service.detection.tail_sink import DetectionTailSink
from service.settings import DetectionSettings
from service.state import LatestObservations
from store.alert_records import Alert
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.service.detection.builders import C, T, commit_event

FAST = DetectionSettings(debounce_seconds=0.1, state_save_seconds=3600)


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _loop(alerts: AlertStore, **kw: object) -> DetectionLoop:
    return DetectionLoop(C, FAST, latest=LatestObservations(), alerts=alerts, tail_live=lambda: True, **kw)  # type: ignore[arg-type]


async def _fire_rewind_of_g(alerts: AlertStore) -> None:
    t = int(time.time() * 1000)
    loop = _loop(alerts)
    await loop.start()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, t - 20), commit_event(300, 2, t)])
    await loop.evaluate_now()
    await loop.stop()
    assert [a.group for a in alerts.firing(C)] == ["g"]


@pytest.mark.parametrize(
    "scope",
    [
        Scope.from_patterns(NameFilter(exclude=["g"])),
        Scope.from_patterns(topics=NameFilter(exclude=[T])),
        Scope.from_patterns(pairs=[("g", T)]),
    ],
    ids=["group", "topic", "pair"],
)
async def test_detection_loop_start_resolves_alerts_out_of_scope_and_forgets_their_state(
    alerts: AlertStore, scope: Scope
) -> None:
    await _fire_rewind_of_g(alerts)
    told: list[Alert] = []

    async def listener(written: Sequence[Alert]) -> None:
        told.extend(written)

    loop = _loop(alerts, scope=scope, listeners=[listener])
    await loop.start()
    await loop.stop()

    assert alerts.firing(C) == ()
    [a] = alerts.list().alerts
    assert (a.status, a.resolved_reason) == ("resolved", "out_of_scope")
    assert [(x.id, x.resolved_reason) for x in told] == [(a.id, "out_of_scope")]
    assert not any(k.group == "g" for k in loop.state.commits)


async def test_detection_loop_start_keeps_alerts_in_scope(alerts: AlertStore) -> None:
    await _fire_rewind_of_g(alerts)
    loop = _loop(alerts, scope=Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"])))
    await loop.start()
    await loop.stop()
    assert [a.group for a in alerts.firing(C)] == ["g"]
    assert any(k.group == "g" for k in loop.state.commits)
