from collections.abc import Sequence
from dataclasses import replace

from service.notify.fanout import FanOut, Told
from store.alert_records import Alert
from store.notification_records import Change, NewNotification, Silence
from tests.service.notify.builders import T0, alert, alertmanager, resolved, silence, webhook


def _change(a: Alert, transition: str, seq: int = 1, at: float = T0) -> Change:
    return Change(seq, transition, at, a.severity, a.cause, a)


def _rows(
    fan: FanOut,
    *changes: Change,
    told: Told | None = None,
    silences: Sequence[Silence] = (),
    firing: Sequence[Alert] = (),
) -> list[NewNotification]:
    return fan(list(changes), list(firing), told if told is not None else set(), list(silences), T0)


def test_fanout_fired_one_row_per_receiver_with_its_payload() -> None:
    rows = _rows(FanOut([webhook(), alertmanager()]), _change(alert(), "fired", seq=9))

    assert [(r.receiver, r.event, r.state, r.transition_seq) for r in rows] == [
        ("hook", "firing", "pending", 9),
        ("am", "firing", "pending", 9),
    ]
    assert rows[0].payload["alert"]["id"] == "al-1"
    assert rows[1].payload["labels"]["alertname"] == "offset_rewind"


def test_fanout_filters_kind_and_severity() -> None:
    fan = FanOut(
        [
            webhook("rewinds", kinds=["offset_rewind"]),
            webhook("lag", kinds=["lag_high"]),
            webhook("critical", severities=["critical"]),
            webhook("warning", severities=["warning"]),
        ]
    )

    rows = _rows(fan, _change(alert(), "fired"))

    assert [r.receiver for r in rows] == ["rewinds", "critical"]


def test_fanout_unmapped_transition_no_rows() -> None:
    assert _rows(FanOut([webhook()]), _change(alert(), "snapshot_failed")) == []


def test_fanout_update_of_untold_alert_sent_as_firing() -> None:
    # Fired as a warning (filtered out), escalated to critical: the receiver first hears of it now.
    escalated = alert(severity="critical")

    rows = _rows(FanOut([webhook(severities=["critical"])]), _change(escalated, "reclassified"))

    assert [(r.event, r.payload["transition"]) for r in rows] == [("firing", "reclassified")]


def test_fanout_update_of_told_alert_sent_as_updated() -> None:
    rows = _rows(FanOut([webhook()]), _change(alert(), "repeated"), told={("hook", "al-1")})

    assert [r.event for r in rows] == ["updated"]


def test_fanout_silenced_alert_recorded_not_pending() -> None:
    s = silence(("group", "=~", "bill.*"))

    rows = _rows(FanOut([webhook()]), _change(alert(), "fired"), silences=[s])

    assert [(r.event, r.state, r.silence_id) for r in rows] == [("firing", "silenced", "si-1")]


def test_fanout_silence_of_other_group_does_not_hold() -> None:
    rows = _rows(FanOut([webhook()]), _change(alert(), "fired"), silences=[silence(("group", "=", "search"))])

    assert [r.state for r in rows] == ["pending"]


def test_fanout_resolved_only_to_told_receivers_even_when_silenced() -> None:
    fan = FanOut([webhook("told"), webhook("never")])
    done = resolved(alert(), T0 + 5)

    rows = _rows(
        fan, _change(done, "resolved"), told={("told", "al-1")}, silences=[silence(("kind", "=~", ".*"))]
    )

    assert [(r.receiver, r.event, r.state) for r in rows] == [("told", "resolved", "pending")]


def test_fanout_fired_then_resolved_in_one_batch_both_sent() -> None:
    a = alert()
    rows = _rows(FanOut([webhook()]), _change(a, "fired", 1), _change(resolved(a, T0 + 1), "resolved", 2))

    assert [r.event for r in rows] == ["firing", "resolved"]


def test_fanout_catch_up_firing_alert_never_told_queued_once() -> None:
    fan = FanOut([webhook()])
    told: Told = set()

    first = _rows(fan, told=told, firing=[alert()])
    second = _rows(fan, told=told, firing=[alert()])

    assert [(r.event, r.transition_seq, r.payload["transition"]) for r in first] == [("firing", None, None)]
    assert second == []


def test_fanout_catch_up_still_silenced_nothing_recorded() -> None:
    rows = _rows(FanOut([webhook()]), firing=[alert()], silences=[silence(("kind", "=", "offset_rewind"))])

    assert rows == []


def test_fanout_catch_up_silence_expired_notified() -> None:
    ended = silence(("kind", "=", "offset_rewind"), starts=T0 - 100, ends=T0 - 1)

    rows = _rows(FanOut([webhook()]), firing=[alert()], silences=[ended])

    assert [(r.event, r.state) for r in rows] == [("firing", "pending")]


def test_fanout_change_uses_transition_severity_not_current() -> None:
    now_warning = alert(severity="warning")
    change = replace(_change(now_warning, "fired"), severity="critical")

    (row,) = _rows(FanOut([webhook()]), change)

    assert row.payload["alert"]["severity"] == "critical"
