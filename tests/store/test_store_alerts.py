import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import store.alerts as alerts_module
from alerts.model import COMMITTED_BELOW_LOG_START
from collectors.errors import StoreError
from service.detection.lifecycle import LifecycleRules, plan
from store import Store, alert_counts, alert_rows
from store.alert_records import EVENT_LIKE_KINDS, Alert, AlertWrite, Fingerprint, Transition
from store.alerts import AlertStore
from store.db import CACHE_KIB, Connection
from store.migrations import MIGRATIONS
from store.settings import StoreSettings
from tests.service.detection.builders import C, lag, rewind

RULES = LifecycleRules()


@pytest.fixture
def alerts(settings: StoreSettings) -> Iterator[AlertStore]:
    with AlertStore.open(settings) as opened:
        yield opened


def _cycle(alerts: AlertStore, findings: Sequence[object], now: float) -> tuple[Alert, ...]:
    def planner(
        firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]
    ) -> Sequence[AlertWrite]:
        return plan(firing, findings, frozenset(), {}, now, RULES, resolved=resolved).writes  # type: ignore[arg-type]

    return alerts.update_firing(C, planner, now, resolved_since=now - 3600)


def test_update_firing_repeat_dedupes_one_firing_row(alerts: AlertStore) -> None:
    [first] = _cycle(alerts, [rewind(at=1.0)], 10.0)
    [second] = _cycle(alerts, [rewind(400, 100, at=5.0)], 20.0)
    assert second.id == first.id
    [stored] = alerts.firing(C)
    assert (stored.occurrences, stored.updated_at, stored.magnitude_total["messages_replayed"]) == (
        2,
        20.0,
        500,
    )
    assert [t.transition for t in alerts.transitions(first.id)] == ["fired", "repeated"]


def test_firing_fingerprint_second_insert_rejected_by_unique_index(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [rewind()], 10.0)
    twin = Alert(**{**a.__dict__, "id": "other", "seq": None})
    with pytest.raises(StoreError):
        alerts.update_firing(C, lambda firing, resolved: [AlertWrite(twin, True, "fired")], 11.0)
    assert [x.id for x in alerts.firing(C)] == [a.id]


def test_ack_event_like_resolves_with_ack_fields(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [rewind()], 10.0)
    acked = alerts.ack(a.id, "alice", "known replay", 30.0)
    assert acked is not None
    assert (acked.status, acked.resolved_reason, acked.ack_by, acked.ack_comment, acked.acked_at) == (
        "resolved",
        "acknowledged",
        "alice",
        "known replay",
        30.0,
    )
    assert alerts.firing(C) == ()
    assert _cycle(alerts, [rewind()], 35.0) == ()  # the acknowledged occurrence, re-read: no new alert
    [again] = _cycle(alerts, [rewind(at=40.0)], 40.0)
    assert again.id != a.id and again.occurrences == 1


def test_ack_state_like_stays_firing(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [lag()], 10.0)
    acked = alerts.ack(a.id, "bob", "", 11.0)
    assert acked is not None and (acked.status, acked.ack_by) == ("firing", "bob")
    assert [t.transition for t in alerts.transitions(a.id)] == ["fired", "acked"]


def test_ack_unknown_id_none(alerts: AlertStore) -> None:
    assert alerts.ack("nope", "x", "", 1.0) is None


def test_list_filters_and_cursor_pages_newest_first(alerts: AlertStore) -> None:
    ids = [_cycle(alerts, [rewind(partition=p, at=float(p))], float(p))[0].id for p in range(5)]
    [lagging] = _cycle(alerts, [lag(group="h")], 100.0)
    page1 = alerts.list(kind="offset_rewind", limit=2)
    page2 = alerts.list(kind="offset_rewind", limit=2, cursor=page1.next_cursor)
    page3 = alerts.list(kind="offset_rewind", limit=2, cursor=page2.next_cursor)
    assert [a.id for a in page1.alerts + page2.alerts + page3.alerts] == ids[::-1]
    assert page3.next_cursor is None
    assert [a.id for a in alerts.list(group="h").alerts] == [lagging.id]
    assert [a.id for a in alerts.list(severity="warning").alerts] == [lagging.id]
    assert [a.id for a in alerts.list(since=3.0, kind="offset_rewind").alerts] == ids[:2:-1]
    alerts.ack(ids[0], "a", "", 200.0)
    assert ids[0] not in [a.id for a in alerts.list(status="firing").alerts]
    assert [a.id for a in alerts.list(status="resolved").alerts] == [ids[0]]
    assert alerts.list(cluster="other").alerts == ()
    assert alerts.list(topic="t", limit=1000).alerts[0].id == lagging.id


def test_list_bad_cursor_or_limit_raises(alerts: AlertStore) -> None:
    with pytest.raises(StoreError):
        alerts.list(cursor="x1")
    with pytest.raises(StoreError):
        alerts.list(limit=0)


def test_reopen_store_same_firing_alerts_and_repeat_not_duplicated(settings: StoreSettings) -> None:
    with AlertStore.open(settings) as first:
        [a] = _cycle(first, [rewind()], 10.0)
        first.set_snapshot(a.id, "snap-1", 11.0)
    with AlertStore.open(settings) as second:
        [b] = second.firing(C)
        assert (b.id, b.snapshot_id, b.evidence["old_offset"], b.magnitude["messages_replayed"]) == (
            a.id,
            "snap-1",
            500,
            200,
        )
        _cycle(second, [rewind()], 20.0)  # the same occurrence again (re-delivered after a restart)
        [c] = second.firing(C)
        assert (c.id, c.occurrences, c.magnitude_total["messages_replayed"]) == (a.id, 1, 200)
        assert second.list().alerts == (c,)


def test_set_snapshot_first_wins_second_only_noted(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [rewind()], 10.0)
    alerts.set_snapshot(a.id, "s1", 11.0)
    alerts.set_snapshot(a.id, "s2", 12.0)
    got = alerts.get(a.id)
    assert got is not None and got.snapshot_id == "s1"
    assert [t.detail.get("snapshot_id") for t in alerts.transitions(a.id) if t.transition == "snapshot"] == [
        "s1",
        "s2",
    ]


def test_detection_state_saved_replaced_and_loaded(alerts: AlertStore) -> None:
    assert alerts.load_state(C) is None
    alerts.save_state(C, '{"a":1}', 1, 5.0)
    alerts.save_state(C, '{"a":2}', 1, 6.0)
    assert alerts.load_state(C) == (6.0, 1, '{"a":2}', ())


def test_detection_state_parts_loaded_in_order_and_replaced_by_the_next_save(alerts: AlertStore) -> None:
    parts = [("commits", "[1]"), ("commits", "[2]"), ("ranges", "[3]")]
    alerts.save_state(C, "{}", 4, 5.0, iter(parts))  # taken as they come, like the codec's generator
    alerts.save_state("other", "{}", 4, 5.0, [("ranges", "[9]")])
    assert alerts.load_state(C) == (5.0, 4, "{}", tuple(parts))
    alerts.save_state(C, "{}", 4, 6.0, [("ranges", "[4]")])  # fewer parts: none of the old ones stay
    assert alerts.load_state(C) == (6.0, 4, "{}", (("ranges", "[4]"),))
    assert alerts.load_state("other") == (5.0, 4, "{}", (("ranges", "[9]"),))


def test_detection_state_parts_unchanged_kept_the_others_written(alerts: AlertStore) -> None:
    """A save by change hands None for a part unchanged since the last save: the stored one stays."""
    alerts.save_state(C, "{}", 4, 5.0, [("commits", "[1]"), ("commits", "[2]"), ("ranges", "[3]")])
    alerts.save_state(C, '{"b":1}', 4, 6.0, [("commits", None), ("commits", "[5]")])
    assert alerts.load_state(C) == (6.0, 4, '{"b":1}', (("commits", "[1]"), ("commits", "[5]")))


def test_detection_state_part_said_unchanged_but_not_stored_refused(alerts: AlertStore) -> None:
    """The caller's record of the last save is wrong (a part said unchanged is not there): nothing is
    written, the state saved before stays."""
    alerts.save_state(C, "{}", 4, 5.0, [("ranges", "[1]")])
    with pytest.raises(StoreError, match="1 of its 2 parts not stored"):
        alerts.save_state(C, '{"b":1}', 4, 6.0, [("ranges", "[2]"), ("ranges", None)])
    assert alerts.load_state(C) == (5.0, 4, "{}", (("ranges", "[1]"),))


def test_a_failed_save_keeps_the_state_saved_before(alerts: AlertStore) -> None:
    """The body and its parts are one transaction: a part that cannot be written leaves the older pair."""
    alerts.save_state(C, "{}", 4, 5.0, [("ranges", "[1]")])

    def parts() -> Iterator[tuple[str, str]]:
        yield ("ranges", "[2]")
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(StoreError):
        alerts.save_state(C, "{}", 4, 6.0, parts())
    assert alerts.load_state(C) == (5.0, 4, "{}", (("ranges", "[1]"),))


@pytest.mark.sqlite_only
def test_sqlite_writers_page_cache_is_restored_after_moving_the_state(alerts: AlertStore) -> None:
    alerts.save_state(C, "{}", 4, 5.0, [("ranges", "[1]")])
    alerts.load_state(C)
    assert alerts._conn.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB


def test_alert_store_shares_file_with_store(settings: StoreSettings, store: Store) -> None:
    with AlertStore.open(settings) as alerts:
        _cycle(alerts, [rewind()], 10.0)
        store.set_tail_position(C, 0, 5, 1.0)
        assert len(alerts.firing(C)) == 1 and store.tail_position(C, 0) is not None


def test_alerts_migration_is_version_4() -> None:
    assert (MIGRATIONS[3].version, MIGRATIONS[3].name) == (
        4,
        "alerts, their transitions and the detection state",
    )


def test_closed_alert_store_raises(settings: StoreSettings) -> None:
    alerts = AlertStore.open(settings)
    alerts.close()
    with pytest.raises(StoreError):
        alerts.firing(C)


def test_metric_counters_firing_incidents_and_magnitudes_summed(alerts: AlertStore) -> None:
    _cycle(alerts, [rewind(at=1.0)], 10.0)
    _cycle(alerts, [rewind(400, 100, at=5.0)], 20.0)
    [a] = alerts.firing(C)
    assert alerts.firing_counts() == {("offset_rewind", "critical", C): 1}
    assert alerts.incident_totals() == {("offset_rewind", C): 2}
    totals = alerts.magnitude_totals()
    assert totals[("replayed", C)] == a.magnitude_total["messages_replayed"]
    assert (totals[("skipped", C)], totals[("lost", C)]) == (0, 0)
    alerts.ack(a.id, "alice", "", 30.0)
    assert alerts.firing_counts() == {}
    assert alerts.incident_totals() == {("offset_rewind", C): 2}


@pytest.fixture
def counter_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The version of each reading of the /metrics alert counters (each a scan of every alert kept)."""
    reads: list[int] = []
    counted = alert_counts.count_alerts

    def spied(c: Connection, version: int) -> alert_counts.Counts:
        reads.append(version)
        return counted(c, version)

    monkeypatch.setattr(alerts_module, "count_alerts", spied)
    return reads


def test_metric_counters_read_again_only_once_the_alerts_changed_here_or_by_another_store(
    alerts: AlertStore, settings: StoreSettings, counter_reads: list[int]
) -> None:
    reads = counter_reads
    [a] = _cycle(alerts, [rewind(at=1.0)], 10.0)
    assert alerts.firing_counts() == {("offset_rewind", "critical", C): 1}
    assert alerts.incident_totals() == {("offset_rewind", C): 1} and len(reads) == 1
    assert alerts.magnitude_totals()[("replayed", C)] == a.magnitude_total["messages_replayed"]
    assert len(reads) == 1  # nothing written since: the counts as read
    alerts.ack(a.id, "alice", "", 11.0)
    assert alerts.firing_counts() == {} and len(reads) == 2
    with AlertStore.open(settings) as other:  # another store on the database (the other replica's)
        _cycle(other, [lag()], 12.0)
    assert alerts.firing_counts() == {("lag_high", "warning", C): 1} and len(reads) == 3
    assert alerts.incident_totals() == {("offset_rewind", C): 1, ("lag_high", C): 1} and len(reads) == 3


def test_metric_counters_not_read_again_after_writes_that_change_nothing_they_count(
    tmp_path: Path, counter_reads: list[int]
) -> None:
    """SQLite (one process's file; on PostgreSQL every write bumps the change counter they are read at):
    a detection state save and a silent refresh of firing alerts leave the counters as they were (each
    read again scans every alert kept: with a year of them, twice a minute for nothing); a refresh whose
    message totals move, and a new alert, make them read again."""
    reads = counter_reads
    lost = {"messages_lost": 5}
    below = replace(lag(), kind=COMMITTED_BELOW_LOG_START, severity="critical", magnitude=lost)
    with AlertStore.open(StoreSettings(path=tmp_path / "offsetguard.db")) as alerts:
        _cycle(alerts, [lag(), below], 10.0)
        assert alerts.firing_counts() == {("lag_high", "warning", C): 1, (below.kind, "critical", C): 1}
        assert alerts.magnitude_totals()[("lost", C)] == 5 and len(reads) == 1
        alerts.save_state(C, "{}", 4, 11.0)
        refreshed = _cycle(alerts, [lag(30_000), below], 10.0 + RULES.refresh_seconds)
        assert [a.magnitude["lag"] for a in refreshed if a.kind == "lag_high"] == [30_000]  # written
        assert alerts.firing_counts() == {("lag_high", "warning", C): 1, (below.kind, "critical", C): 1}
        assert len(reads) == 1  # nothing they count changed: the counts as read
        moved = replace(below, magnitude={"messages_lost": 9})
        _cycle(alerts, [lag(30_000), moved], 10.0 + 2 * RULES.refresh_seconds)
        assert alerts.magnitude_totals()[("lost", C)] == 9 and len(reads) == 2
        _cycle(alerts, [lag(30_000), moved, rewind(at=1.0)], 10.0 + 2 * RULES.refresh_seconds + 1)
        assert alerts.incident_totals()[("offset_rewind", C)] == 1 and len(reads) == 3


def test_list_cached_page_reflects_ack_committed_since(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [rewind()], 10.0)
    assert [x.status for x in alerts.list(cluster=C).alerts] == ["firing"]
    assert [x.status for x in alerts.list(cluster=C).alerts] == ["firing"]  # served again, maybe cached
    alerts.ack(a.id, "alice", "", 30.0)
    assert [x.status for x in alerts.list(cluster=C).alerts] == ["resolved"]


def _planner_view(alerts: AlertStore, now: float) -> list[tuple[Fingerprint, Alert]]:
    """The firing alerts update_firing hands its planner (kept beside the database), in order."""
    seen: list[tuple[Fingerprint, Alert]] = []

    def planner(firing: Mapping[Fingerprint, Alert], resolved: object) -> Sequence[AlertWrite]:
        seen.extend(firing.items())
        return []

    alerts.update_firing(C, planner, now)
    return seen


def _in_database(alerts: AlertStore) -> list[tuple[Fingerprint, Alert]]:
    return [(a.fingerprint, a) for a in alerts.firing(C)]


def test_update_firing_planner_sees_what_was_committed(alerts: AlertStore, settings: StoreSettings) -> None:
    rw, lg = _cycle(alerts, [rewind(), lag()], 10.0)
    assert _planner_view(alerts, 11.0) == _in_database(alerts) and len(_in_database(alerts)) == 2
    snapped = alerts.set_snapshot(lg.id, "snap-1", 12.0)
    assert snapped is not None and dict(_planner_view(alerts, 12.5))[lg.fingerprint].snapshot_id == "snap-1"
    alerts.ack(rw.id, "alice", "", 13.0)  # event-like: resolved by the ack
    assert _planner_view(alerts, 14.0) == _in_database(alerts) == [(lg.fingerprint, snapped)]
    changed = AlertWrite(replace(snapped, occurrences=99), False, "repeated")
    missing = AlertWrite(Alert(**{**rw.__dict__, "id": "other", "seq": None}), False, "fired")
    with pytest.raises(StoreError):  # rolled back: the kept set must not take the first write either
        alerts.update_firing(C, lambda firing, resolved: [changed, missing], 15.0)
    assert _planner_view(alerts, 16.0) == _in_database(alerts)
    assert dict(_planner_view(alerts, 16.5))[lg.fingerprint].occurrences == 1
    assert len(_cycle(alerts, [rewind(at=20.0)], 20.0)) == 1
    assert _planner_view(alerts, 21.0) == _in_database(alerts)
    with AlertStore.open(settings) as reopened:
        assert _planner_view(reopened, 22.0) == _in_database(reopened) == _in_database(alerts)


def test_update_firing_kept_set_in_the_database_s_order_through_refreshes_new_rows_and_replacements(
    alerts: AlertStore,
) -> None:
    """The kept firing set is folded without sorting while the order cannot have changed (refreshes in
    place, new rows at the end) and sorted when it can (a fingerprint's new row after an ack)."""
    lags = [lag(100, group=g) for g in ("c", "a", "b")]
    _cycle(alerts, [rewind(), *lags], 10.0)
    assert _planner_view(alerts, 11.0) == _in_database(alerts)
    _cycle(alerts, [rewind(), *(replace(f, summary="moved") for f in lags)], 50.0)  # refreshed in place
    assert _planner_view(alerts, 51.0) == _in_database(alerts)
    assert {a.summary for _, a in _in_database(alerts) if a.kind == lags[0].kind} == {"moved"}
    _cycle(alerts, [rewind(), *lags, lag(5, group="d")], 60.0)  # a new row joins at the end
    assert _planner_view(alerts, 61.0) == _in_database(alerts)
    [rw] = [a for _, a in _in_database(alerts) if a.kind == rewind().kind]
    alerts.ack(rw.id, "alice", "", 62.0)  # event-like: resolved; reported again, a new row of its print
    _cycle(alerts, [rewind(at=70.0), *(replace(f, summary="again") for f in lags)], 100.0)
    view = _planner_view(alerts, 101.0)
    assert view == _in_database(alerts) and [a.seq for _, a in view] == sorted(a.seq or 0 for _, a in view)
    assert view[-1][1].kind == rewind().kind and view[-1][1].id != rw.id


def test_update_firing_ack_of_older_alert_keeps_newer_one_firing(alerts: AlertStore) -> None:
    [first] = _cycle(alerts, [rewind()], 10.0)
    alerts.ack(first.id, "alice", "", 11.0)
    [again] = _cycle(alerts, [rewind(at=20.0)], 20.0)
    assert again.fingerprint == first.fingerprint and again.id != first.id
    alerts.ack(first.id, "bob", "late", 21.0)  # the old, resolved one, acknowledged again
    assert [a.id for _, a in _planner_view(alerts, 22.0)] == [again.id] == [a.id for a in alerts.firing(C)]


class _Interleaved:
    """The writer lock, with ``before`` run once just before the first acquisition: another thread's
    write committed while update_firing was on its way to the lock, deterministically."""

    def __init__(self, lock: Any, before: Callable[[], object]) -> None:
        self._lock = lock
        self._before: Callable[[], object] | None = before

    def __enter__(self) -> object:
        before, self._before = self._before, None
        if before is not None:
            before()
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__(*exc)


def test_update_firing_plans_with_an_ack_committed_while_it_waited(alerts: AlertStore) -> None:
    rw, lg = _cycle(alerts, [rewind(), lag()], 10.0)
    assert len(_planner_view(alerts, 11.0)) == 2  # the firing set is now kept
    alerts._lock = _Interleaved(alerts._lock, lambda: alerts.ack(rw.id, "alice", "", 12.0))  # type: ignore[assignment]
    assert [a.id for _, a in _planner_view(alerts, 13.0)] == [lg.id] == [a.id for a in alerts.firing(C)]
    assert [a.id for _, a in _planner_view(alerts, 14.0)] == [lg.id]


def test_update_firing_refreshes_stored_as_written_rejected_unless_firing(alerts: AlertStore) -> None:
    rw, lg = _cycle(alerts, [rewind(), lag()], 10.0)
    alerts.ack(lg.id, "alice", "looking", 11.0)
    [acked] = [a for a in alerts.firing(C) if a.id == lg.id]
    fresh = replace(
        acked, updated_at=50.0, summary="now 900 behind", magnitude={"lag": 900}, evidence={"x": 1}
    )
    [written] = alerts.update_firing(C, lambda firing, resolved: [AlertWrite(fresh, False, None)], 50.0)
    assert written == fresh  # seq kept: a refresh moves no row
    assert (
        dict(_in_database(alerts))[lg.fingerprint]
        == fresh
        == dict(_planner_view(alerts, 51.0))[lg.fingerprint]
    )
    assert [t.transition for t in alerts.transitions(lg.id)] == ["fired", "acked"]  # silent

    resolved_rw = alerts.ack(rw.id, "alice", "", 52.0)  # event-like: resolved by the ack
    assert resolved_rw is not None and not resolved_rw.firing
    stale = AlertWrite(replace(rw, updated_at=60.0), False, None)  # the row is no longer firing
    again = AlertWrite(replace(fresh, updated_at=60.0, summary="changed"), False, None)
    with pytest.raises(StoreError):
        alerts.update_firing(C, lambda firing, resolved: [again, stale], 60.0)
    assert dict(_in_database(alerts))[lg.fingerprint] == fresh  # rolled back, the first refresh too


def test_update_firing_refresh_writes_only_what_a_refresh_changes(alerts: AlertStore) -> None:
    _, lg = _cycle(alerts, [rewind(), lag()], 10.0)
    alerts.ack(lg.id, "alice", "looking", 11.0)
    # planned from a copy taken before the ack (a planner never is: it plans under the store's lock); the
    # refresh writes its magnitude, summary and evidence, and leaves the ack, severity and cause stored
    stale = replace(
        lg,
        severity="critical",
        cause="stale",
        updated_at=50.0,
        summary="now 900 behind",
        magnitude={"lag": 900},
        magnitude_total={"lag": 900},
        evidence={"x": 1},
    )
    alerts.update_firing(C, lambda firing, resolved: [AlertWrite(stale, False, None)], 50.0)
    stored = dict(_in_database(alerts))[lg.fingerprint]
    assert stored == replace(
        stale, severity=lg.severity, cause=lg.cause, ack_by="alice", ack_comment="looking", acked_at=11.0
    )


def test_resolved_occurrences_event_like_since(alerts: AlertStore, raw: Connection) -> None:
    rw, lg = _cycle(alerts, [rewind(), lag()], 10.0)
    alerts.ack(rw.id, "alice", "", 11.0)  # event-like: resolved by the ack
    cleared = replace(lg, status="resolved", resolved_at=12.0, resolved_reason="cleared")
    alerts.update_firing(C, lambda firing, resolved: [AlertWrite(cleared, False, "resolved")], 12.0)
    # the lag alert's occurrence is never compared: not read
    assert alert_rows.resolved_occurrences(raw, C, 11.0) == {(rw.fingerprint, rw.occurrence)}
    assert alert_rows.resolved_occurrences(raw, C, 11.5) == frozenset()


@pytest.mark.sqlite_only
def test_sqlite_resolved_occurrences_read_by_their_index(alerts: AlertStore, settings: StoreSettings) -> None:
    with contextlib.closing(sqlite3.connect(settings.path)) as conn:
        params = (C, "resolved", 11.0, *sorted(EVENT_LIKE_KINDS))
        steps = conn.execute(f"EXPLAIN QUERY PLAN {alert_rows.RESOLVED_OCCURRENCES}", params).fetchall()
    # a range of the resolved alerts' times, not every resolved alert the cluster ever had
    assert [s[-1] for s in steps] == [
        "SEARCH alerts USING INDEX alerts_resolved_by_cluster (cluster=? AND status=? AND resolved_at>?)"
    ]


def test_metric_counters_leave_drills_out_the_alert_itself_says_drill(alerts: AlertStore) -> None:
    drill = replace(
        rewind(at=1.0), group="offsetguard-drill-rewind-1a2b", topic="offsetguard-drill-rewind-1a2b"
    )
    by_topic = replace(lag(), group="orders", topic="offsetguard-drill-lag-9")
    look_alike = replace(lag(group="OFFSETGUARD-DRILL-x"), topic="orders")  # the prefix is case-sensitive
    _cycle(alerts, [drill, by_topic, look_alike], 10.0)
    assert sorted(a.drill for a in alerts.firing(C)) == [False, True, True]
    assert alerts.firing_counts() == {("lag_high", "warning", C): 1}
    assert alerts.incident_totals() == {("lag_high", C): 1}
    assert alerts.magnitude_totals()[("replayed", C)] == 0


def test_firing_of_groups_reads_only_those_groups_and_count_firing_all(alerts: AlertStore) -> None:
    _cycle(alerts, [lag(group="a"), lag(group="b"), lag(group="c"), rewind()], 1.0)  # rewind: group "g"
    assert sorted(a.group or "" for a in alerts.firing_of_groups(C, ["a", "c", "zz"])) == ["a", "c"]
    assert alerts.firing_of_groups(C, []) == () and alerts.firing_of_groups("other", ["a"]) == ()
    assert (alerts.count_firing(C), alerts.count_firing("other")) == (4, 0)


def test_add_transition_appends_to_the_alerts_history(alerts: AlertStore) -> None:
    [a] = _cycle(alerts, [rewind()], 10.0)
    alerts.add_transition(Transition(a.id, 11.5, "snapshot_failed", a.severity, a.cause, {"error": "x"}))
    history = alerts.transitions(a.id)
    assert [(t.transition, t.at, t.detail) for t in history] == [
        ("fired", 10.0, history[0].detail),
        ("snapshot_failed", 11.5, {"error": "x"}),
    ]
