"""The store on PostgreSQL only: a server restarted under it, two store objects (two replicas) sharing one
database, connection errors, and what PostgreSQL's types must keep."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from collectors.errors import StoreError, StoreWriteError
from collectors.model import CommittedObservation, CommittedOffset
from store import Store
from store.alert_records import Alert, AlertWrite, Fingerprint
from store.alerts import AlertStore
from store.db import connect_to
from store.notifications import NotificationStore
from store.opening import ensure_openable
from store.readers import POOL_SIZE
from store.settings import StoreSettings
from tests.service.detection.builders import C, lag, rewind
from tests.store.test_store_alerts import _cycle
from tests.support.postgres import PASSWORD, PostgresServer

T0 = 1_700_000_000.123456


@pytest.fixture
def pg(postgres_url: str, tmp_path: Path) -> StoreSettings:
    return StoreSettings(path=tmp_path / "unused.db", url=postgres_url)


@pytest.fixture
def server_back(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """The session's server, running again after the test whatever it did to it."""
    try:
        yield postgres_server
    finally:
        postgres_server.start()


def _committed(at: float, offset: int) -> CommittedObservation:
    return CommittedObservation("c1", at, (CommittedOffset("g", "t", 0, offset, 3),), ("g",))


def test_postgresql_restart_fails_writes_typed_then_the_store_recovers_by_itself(
    pg: StoreSettings, server_back: PostgresServer
) -> None:
    with Store.open(pg) as store, AlertStore.open(pg) as alerts, NotificationStore.open(pg) as queue:
        store.health.settle_seconds = alerts.health.settle_seconds = 0.0
        store.record_committed(_committed(T0, 10))
        [fired] = _cycle(alerts, [rewind()], 10.0)
        assert store.latest_committed("c1", "g")[0].offset == 10  # a reader is open too

        server_back.restart()  # pg_ctl stop -m fast, start: every session is cut
        store.record_committed(_committed(T0 + 5, 11))  # a dead session found at BEGIN: a new one
        assert store.latest_committed("c1", "g")[0].offset == 11  # the reader's too

        server_back.stop()
        with pytest.raises(StoreWriteError) as info:
            store.record_committed(_committed(T0 + 10, 12))
        assert info.value.code.startswith("PG_")
        assert "127.0.0.1" in str(info.value) and PASSWORD not in str(info.value)
        with pytest.raises(StoreWriteError):
            alerts.ack(fired.id, "alice", "", 11.0)
        with pytest.raises(StoreWriteError):  # the queue's own connection
            queue.next_due()
        with pytest.raises(StoreWriteError):
            store.latest_committed("c1", "g")
        view = store.health.view()
        assert not view.healthy and view.reason is not None and view.reason.startswith("PG_")
        assert view.dropped_rows == 1  # the history row given up, counted
        assert not alerts.health.view().healthy

        server_back.start()
        assert store.record_committed(_committed(T0 + 15, 12)).history_rows == 1  # the change, once
        assert store.health.view().healthy
        acked = alerts.ack(fired.id, "alice", "back", 16.0)
        assert acked is not None and acked.ack_by == "alice" and alerts.health.view().healthy
        assert [p.offset for p in store.committed_history("c1", "g")] == [10, 11, 12]
        assert queue.next_due() is None
        server_back.stop()
    # closed while the server is away: the last-seen times are not saved (a warning), nothing raises


def test_postgresql_unreachable_server_at_open_names_the_host_never_the_password(tmp_path: Path) -> None:
    url = f"postgresql://offsetguard:{PASSWORD}@127.0.0.1:1/offsetguard"  # nothing listens on port 1
    with pytest.raises(StoreWriteError) as info:
        ensure_openable(StoreSettings(path=tmp_path / "x.db", url=url))
    message = str(info.value)
    assert "PostgreSQL 127.0.0.1:1/offsetguard" in message
    assert PASSWORD not in message


def test_postgresql_unknown_database_is_a_clear_store_error(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match='database "nosuchdb" does not exist'):
        ensure_openable(StoreSettings(path=tmp_path / "x.db", url=postgres_server.url("nosuchdb")))


def test_postgresql_keeps_big_offsets_and_microsecond_times(pg: StoreSettings) -> None:
    big = 2**40 + 7  # past 32 bits: BIGINT columns
    with Store.open(pg) as store:
        store.record_committed(_committed(T0, big))
        [point] = store.committed_history("c1", "g")
        assert (point.offset, point.observed_at) == (big, T0)  # DOUBLE PRECISION, not float4
        store.set_tail_position("c1", 0, big, T0)
        store.set_tail_position("c1", 0, big + 1, T0 + 1)  # replaced, not a second row
        assert [(p.next_offset, p.updated_at) for p in store.tail_positions("c1")] == [(big + 1, T0 + 1)]


# ---------------------------------------------------------------------- two replicas, one database


def _view(alerts: AlertStore, now: float) -> dict[Fingerprint, Alert]:
    seen: dict[Fingerprint, Alert] = {}

    def planner(firing: Mapping[Fingerprint, Alert], resolved: object) -> Sequence[AlertWrite]:
        seen.update(firing)
        return []

    alerts.update_firing(C, planner, now)
    return seen


def test_postgresql_ack_by_another_replica_is_seen_by_the_next_update_and_never_overwritten(
    pg: StoreSettings,
) -> None:
    with AlertStore.open(pg) as a, AlertStore.open(pg) as b:
        rw, lg = _cycle(a, [rewind(), lag()], 10.0)
        assert len(_view(a, 11.0)) == 2  # a keeps the firing set beside the database now
        b.ack(lg.id, "bob", "on it", 12.0)  # state-like: stays firing, acknowledged
        b.ack(rw.id, "bob", "", 12.5)  # event-like: resolved by the ack
        firing = _view(a, 13.0)
        assert list(firing) == [lg.fingerprint] and firing[lg.fingerprint].ack_by == "bob"
        # a's next cycle rewrites the lag alert from what it plans against: b's ack stays
        _cycle(a, [lag(value=900)], 14.0)
        [stored] = b.firing(C)
        assert (stored.id, stored.ack_by, stored.ack_comment) == (lg.id, "bob", "on it")
        assert b.get(rw.id) is not None and b.get(rw.id).status == "resolved"  # type: ignore[union-attr]


def test_postgresql_alert_page_cache_sees_a_commit_of_another_replica(pg: StoreSettings) -> None:
    with AlertStore.open(pg) as a, AlertStore.open(pg) as b:
        [fired] = _cycle(a, [rewind()], 10.0)
        assert [x.status for x in a.list(cluster=C).alerts] == ["firing"]
        assert [x.status for x in a.list(cluster=C).alerts] == ["firing"]  # cached now
        b.ack(fired.id, "bob", "", 11.0)
        assert [x.status for x in a.list(cluster=C).alerts] == ["resolved"]


def test_postgresql_history_written_by_another_replica_is_planned_against(pg: StoreSettings) -> None:
    with Store.open(pg) as a, Store.open(pg) as b:
        a.record_committed(_committed(T0, 10))
        b.record_committed(_committed(T0 + 5, 11))  # b loaded a's value at open
        # a's cache still says 10: without the counter it would write 11 again under a new row, or
        # take 10 -> 12 as the change; it reloads, and writes exactly b's successor
        assert a.record_committed(_committed(T0 + 10, 11)).history_rows == 0
        assert a.record_committed(_committed(T0 + 15, 12)).history_rows == 1
        # and a key b adds gets an id a's next insert does not reuse
        b.record_committed(
            CommittedObservation("c1", T0 + 20, (CommittedOffset("h", "t", 0, 1, None),), ("h",))
        )
        a.record_committed(
            CommittedObservation("c1", T0 + 25, (CommittedOffset("k", "t", 0, 1, None),), ("k",))
        )
        assert [g for g in a.groups("c1")] == ["g", "h", "k"]
        assert [p.offset for p in a.committed_history("c1", "g")] == [10, 11, 12]


def test_postgresql_readers_are_a_small_pool_whatever_the_threads(pg: StoreSettings) -> None:
    """Each PostgreSQL connection is a server process: 16 threads reading at once share POOL_SIZE."""
    with Store.open(pg) as store:
        store.record_committed(_committed(T0, 10))
        barrier = threading.Barrier(16)
        seen: list[int] = []

        def read() -> None:
            barrier.wait()
            for _ in range(20):
                seen.append(store.latest_committed("c1", "g")[0].offset)

        threads = [threading.Thread(target=read) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with contextlib.closing(connect_to(pg)) as conn:
            [(sessions,)] = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = 'offsetguard'"
            ).fetchall()
        assert seen == [10] * 16 * 20
        assert sessions <= 1 + POOL_SIZE + 1  # the writer, the pool, and this query's own
