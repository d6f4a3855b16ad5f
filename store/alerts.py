"""The :class:`AlertStore`: alerts, their history and the detection state, in the store's SQLite file.

It opens its own writer connection on the same database as :class:`store.Store` (WAL lets both
write in turn; the file's write gate, ``BEGIN IMMEDIATE`` and ``busy_timeout`` serialise them) and
shares its helpers in :mod:`store.db`. Every method blocks: call it from a worker thread in async code.
Failures raise :class:`collectors.errors.StoreError`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

import store.alert_retention as alert_retention
import store.alert_rows as alert_rows
import store.changes as changes
from collectors.errors import StoreError
from store.alert_counts import Counts, WriteCount, count_alerts, file_writes, same_message_totals
from store.alert_records import (
    RESOLVED,
    Alert,
    AlertPage,
    AlertWrite,
    Fingerprint,
    Transition,
    is_event_like,
)
from store.alert_retention import PrunedAlerts
from store.alert_rows import Filters
from store.db import Connection, small_cache, translated
from store.opening import open_migrated
from store.readers import Readers
from store.settings import StoreSettings
from store.writer import WriterConnection

T = TypeVar("T")
MAX_PAGE = 1000
# Alert writes a transaction of update_firing takes (~65 ms of SQLite and Python on a quiet core): the
# process's other writers wait for no more than one such transaction during a fleet's burst.
WRITES_PER_TRANSACTION = 1000
_CACHED_PAGES = 32  # alert list pages remembered per reader thread (until the next commit)

# (firing alerts by fingerprint, (fingerprint, occurrence) of alerts resolved lately) -> changes
Planner = Callable[[Mapping[Fingerprint, Alert], frozenset[tuple[Fingerprint, str]]], Sequence[AlertWrite]]


_STATE_COLUMNS = ("cluster", "saved_at", "format", "body")
_PART_COLUMNS = ("cluster", "seq", "section", "body")
Part = tuple[str, str]  # (a large section of the detection state, a JSON array of its rows)


class SavedState(NamedTuple):
    saved_at: float
    format: int
    body: str
    parts: tuple[Part, ...] = ()  # in the order saved


class AlertStore(WriterConnection):
    """Alert lifecycle persistence. Build with :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: Connection, path: StoreSettings | Path | None = None) -> None:
        # the writer also serves reads when there is no path (or settings)
        super().__init__(conn, "alert store", counter=changes.ALERTS)
        # Reads (the API's) use their own read-only connections, as Store does (store.readers): they
        # never wait for the write lock, which a cycle's update_firing holds for a whole transaction.
        self._settings = StoreSettings(path=path) if isinstance(path, Path) else path
        self._readers = Readers(self._settings, "alert store") if self._settings is not None else None
        self._local = threading.local()  # this thread's cached list pages
        # Each cluster's firing alerts as last committed, by fingerprint in seq order: update_firing plans
        # against them every cycle (loading and decoding them from SQLite each time was ~4 % of the
        # service's CPU at 200 firing alerts). Every alert write goes through this store's writer
        # connection, which folds what it committed in (under its lock, never after a rollback).
        self._firing: dict[str, dict[Fingerprint, Alert]] = {}
        self._stale_count = 0  # times another replica's writes were found (see update_firing)
        self._writes = file_writes(self._settings) if not conn.dialect.shared else WriteCount()
        self._counts: Counts | None = None  # the /metrics counters, as of a version (_counters)
        self._counts_kept = False  # this write transaction changes nothing they count (_keep_counts)

    @classmethod
    def open(cls, settings: StoreSettings) -> AlertStore:
        """Open (creating and migrating as needed) the database at ``settings.path``."""
        conn = open_migrated(settings, "alert store")
        try:
            return cls(conn, settings)
        except BaseException:
            conn.close()
            raise

    def _stale(self) -> None:
        self._firing.clear()  # another replica wrote alerts: read them again
        self._stale_count += 1

    def _close_connections(self) -> None:
        if self._readers is not None:
            self._readers.close()
        self._conn.close()

    def _read(self, action: str, work: Callable[[Connection], T]) -> T:
        if self._readers is None:
            return self._run(action, work)
        with translated(action), self._readers.connection(action) as conn:
            return work(conn)

    # ------------------------------------------------------------------ lifecycle writes

    def update_firing(
        self, cluster: str, plan: Planner, at: float, *, resolved_since: float | None = None
    ) -> tuple[Alert, ...]:
        """Load ``cluster``'s firing alerts, let ``plan`` decide the changes, write them.

        ``plan`` also gets the occurrences of alerts resolved at or after ``resolved_since`` (none if
        None), so an occurrence reported again after its alert was acknowledged is recognised.

        Planning and writing hold this store's lock, so an acknowledgement can never interleave with a
        cycle's changes. The writes go :data:`WRITES_PER_TRANSACTION` to a transaction: a fleet's burst
        (tens of thousands of lag alerts firing in one evaluation) lets the process's other writers take
        the database's lock between them (:mod:`store.gate`) instead of waiting seconds for one
        transaction. Should one fail, those before it stay written (their transitions are notified) and
        the error is raised. Returns the alerts as written (with ``seq``), in plan order.
        """
        written: list[Alert] = []
        pending: list[AlertWrite] = []
        cached: dict[Fingerprint, Alert] = {}
        stale_before = self._stale_count

        def first(conn: Connection) -> None:
            nonlocal cached, stale_before
            stale_before = self._stale_count  # (the guard has run: a foreign commit is known now)
            found = self._firing.get(cluster)  # under the writer lock: nothing commits in between
            if found is None:
                found = {a.fingerprint: a for a in alert_rows.firing(conn, cluster)}
            cached = found
            done: frozenset[tuple[Fingerprint, str]] = frozenset()
            if resolved_since is not None:
                done = alert_rows.resolved_occurrences(conn, cluster, resolved_since)
            pending.extend(plan(dict(cached), done))
            pending.reverse()  # taken from the end, in plan order
            write_some(conn)

        def then(conn: Connection) -> None:
            if self._stale_count != stale_before:  # another replica wrote alerts since the plan
                raise StoreError(
                    f"the alerts of {cluster} changed elsewhere while an update was written;"
                    f" {len(pending)} writes left to the next evaluation",
                    cluster=cluster,
                )
            write_some(conn)

        def write_some(conn: Connection) -> None:
            refreshed: list[Alert] = []
            transitions: list[Transition] = []
            counted = False  # whether a write may change what the /metrics counters count
            for _ in range(min(WRITES_PER_TRANSACTION, len(pending))):
                w = pending.pop()
                if alert_rows.is_refresh(w):
                    refreshed.append(w.alert)
                    written.append(w.alert)
                    counted = counted or not same_message_totals(cached.get(w.alert.fingerprint), w.alert)
                else:
                    counted = True
                    written.append(alert_rows.write(conn, w, at, transitions))
            alert_rows.add_transitions(conn, transitions)
            alert_rows.refresh(conn, refreshed)
            if not counted:
                self._keep_counts()

        def committed() -> None:
            if pending:  # written in part: read again should the rest fail
                self._firing.pop(cluster, None)
            else:
                self._firing[cluster] = _fold_firing(cached, written)

        with self._lock:
            self._run("update alerts", first, write=True, committed=committed)
            while pending:
                self._run("update alerts", then, write=True, committed=committed)
        return tuple(written)

    def ack(self, alert_id: str, who: str, comment: str, at: float) -> Alert | None:
        """Acknowledge; an event-like alert is resolved by it, a state-like one keeps firing until it
        clears. Acknowledging again replaces who/comment/when. None if there is no such alert."""

        written: list[Alert] = []

        def work(conn: Connection) -> Alert | None:
            alert = alert_rows.one(conn, alert_id)
            if alert is None:
                return None
            acked = replace(alert, ack_by=who, ack_comment=comment, acked_at=at)
            detail = {"by": who, "comment": comment}
            stored = alert_rows.write(conn, AlertWrite(acked, False, "acked", detail), at)
            if stored.firing and is_event_like(stored.kind):
                done = replace(stored, status=RESOLVED, resolved_at=at, resolved_reason="acknowledged")
                stored = alert_rows.write(
                    conn, AlertWrite(done, False, "resolved", {"reason": "acknowledged"}), at
                )
            written.append(stored)
            return stored

        return self._run("acknowledge alert", work, write=True, committed=lambda: self._written(written))

    def set_snapshot(self, alert_id: str, snapshot_id: str, at: float) -> Alert | None:
        """Record the snapshot taken for an alert (the first one wins); None if there is no such alert."""

        written: list[Alert] = []

        def work(conn: Connection) -> Alert | None:
            alert = alert_rows.one(conn, alert_id)
            if alert is None:
                return None
            detail = {"snapshot_id": snapshot_id}
            if alert.snapshot_id is not None:
                alert_rows.add_transition(
                    conn, Transition(alert_id, at, "snapshot", alert.severity, alert.cause, detail)
                )
                return alert
            stored = alert_rows.write(
                conn, AlertWrite(replace(alert, snapshot_id=snapshot_id), False, "snapshot", detail), at
            )
            written.append(stored)
            return stored

        return self._run("record alert snapshot", work, write=True, committed=lambda: self._written(written))

    def _written(self, alerts: Sequence[Alert]) -> None:
        """Called under the writer lock after a commit: the firing sets kept take ``alerts``."""
        for a in alerts:
            cached = self._firing.get(a.cluster)
            if cached is not None:
                self._firing[a.cluster] = _fold_firing(cached, (a,))

    def add_transition(self, transition: Transition) -> None:
        """Append a history entry (e.g. ``snapshot_failed``)."""
        self._run("add alert transition", lambda c: alert_rows.add_transition(c, transition), write=True)

    # ------------------------------------------------------------------ reads

    def firing(self, cluster: str) -> tuple[Alert, ...]:
        """Every firing alert of ``cluster``, oldest first."""
        return self._read("read firing alerts", lambda c: alert_rows.firing(c, cluster))

    def firing_of_groups(self, cluster: str, groups: Sequence[str]) -> tuple[Alert, ...]:
        """The firing alerts of these groups of ``cluster``, oldest first."""
        return self._read("read firing alerts", lambda c: alert_rows.firing_of_groups(c, cluster, groups))

    def count_firing(self, cluster: str) -> int:
        """How many alerts of ``cluster`` fire (drills included)."""
        return self._read("count firing alerts", lambda c: alert_rows.count_firing(c, cluster))

    def get(self, alert_id: str) -> Alert | None:
        return self._read("read alert", lambda c: alert_rows.one(c, alert_id))

    def transitions(self, alert_id: str) -> tuple[Transition, ...]:
        """The alert's history, oldest first."""
        return self._read("read alert history", lambda c: alert_rows.transitions(c, alert_id))

    def list(
        self,
        *,
        status: str | None = None,
        kind: str | None = None,
        severity: str | None = None,
        cluster: str | None = None,
        group: str | None = None,
        topic: str | None = None,
        since: float | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> AlertPage:
        """Alerts matching every given filter, newest first, at most ``limit`` (1..1000) per page."""
        if not 1 <= limit <= MAX_PAGE:
            raise StoreError(f"alert page limit must be 1..{MAX_PAGE}, not {limit}")
        filters = Filters(status, kind, severity, cluster, group, topic, since)
        if self._readers is None:
            return self._run("list alerts", lambda c: alert_rows.page(c, filters, limit, cursor))
        return self._read("list alerts", lambda c: self._cached_page(c, filters, limit, cursor))

    def _cached_page(self, conn: Connection, filters: Filters, limit: int, cursor: str | None) -> AlertPage:
        """The page this thread read last for the same query, while nobody has committed since.

        ``PRAGMA data_version`` on a reader changes whenever another connection commits; it is read
        before the page, so a commit in between can only make the next call read again, never keep a
        stale page. Dashboards poll the same first page, and decoding its rows was most of its cost. On
        PostgreSQL the alerts' change counter (:mod:`store.changes`) plays that part, for every replica.
        """
        if conn.dialect.shared:
            version = changes.current(conn, changes.ALERTS)
        else:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        pages: dict[tuple[Filters, int, str | None], tuple[int, AlertPage]] | None
        pages = getattr(self._local, "pages", None)
        if pages is None:
            pages = self._local.pages = {}
        key = (filters, limit, cursor)
        hit = pages.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        page = alert_rows.page(conn, filters, limit, cursor)
        if len(pages) >= _CACHED_PAGES:
            pages.clear()
        pages[key] = (version, page)
        return page

    # ------------------------------------------------------------------ detection state

    # ---------------------------------------------------------------- counters for /metrics
    # Read on the readers' connections (a render never waits for the writer's lock, which a burst of alert
    # writes holds across its transactions), and read again only once the alerts have changed: each
    # query scans every alert kept (a year of them), and most renders come between two alert writes.

    def firing_counts(self) -> dict[tuple[str, str, str], int]:
        """Firing alerts by (kind, severity, cluster); drills left out (as in every figure below)."""
        return dict(self._counters().firing)

    def incident_totals(self) -> dict[tuple[str, str], int]:
        """Distinct occurrences ever recorded, by (kind, cluster): a monotonic incident counter (the
        alerts deleted by :meth:`prune` still counted)."""
        return dict(self._counters().incidents)

    def magnitude_totals(self) -> dict[tuple[str, str], int]:
        """Messages replayed / skipped / lost summed over every alert (the deleted ones too), by (name,
        cluster)."""
        return dict(self._counters().magnitudes)

    def _began(self) -> None:
        self._counts_kept = False

    def _keep_counts(self) -> None:
        """This write transaction changes nothing the counters count (a detection state save, a silent
        refresh of firing alerts whose message totals stay): its commit does not make them read again. On
        PostgreSQL every write bumps the change counter they are read at anyway."""
        self._counts_kept = True

    def _wrote(self) -> None:
        kept, self._counts_kept = self._counts_kept, False
        if not kept:
            self._writes.add()

    def _counters(self) -> Counts:
        """The three counters as of the alerts' last change: this file's alert writes in this process (a
        SQLite file is one process's), or on PostgreSQL the change counter both replicas bump."""

        def read(c: Connection) -> Counts:
            version = changes.current(c, changes.ALERTS) if c.dialect.shared else self._writes.n
            kept = self._counts
            if kept is not None and kept.version == version:
                return kept
            counted = count_alerts(c, version)
            self._counts = counted
            return counted

        return self._read("count alerts", read)

    # ---------------------------------------------------------------- retention

    def prune(self, before: float, *, chunk: int = alert_retention.ALERTS_PER_CHUNK) -> PrunedAlerts:
        """Delete the alerts resolved before ``before`` with their transitions and notification rows (see
        :mod:`store.alert_retention`), ``chunk`` alerts per transaction, the lock released in between."""
        total = PrunedAlerts()
        for cluster in self._run("list alert clusters", alert_retention.clusters):
            while True:
                work = partial(alert_retention.prune_chunk, cluster=cluster, cutoff=before, limit=chunk)
                done = self._run("prune alerts", work, write=True)
                total += done
                if done.alerts < chunk:
                    break
        return total

    def save_state(
        self, cluster: str, body: str, format: int, at: float, parts: Iterable[tuple[str, str | None]] = ()
    ) -> None:
        """Replace ``cluster``'s saved detection state: ``body`` and its ``parts`` (none for a format kept
        whole), through a small page cache (:func:`store.db.small_cache`). A part whose text is None is
        the one stored at its place, unchanged since the last save (only its section is given): only the
        others are written. Raises :class:`~collectors.errors.StoreError` (nothing written) if no part is
        stored there."""

        def save(c: Connection) -> None:
            count = 0

            def written() -> Iterator[tuple[str, int, str, str]]:
                nonlocal count
                for seq, (section, rows) in enumerate(parts):
                    count = seq + 1
                    if rows is not None:
                        yield (cluster, seq, section, rows)

            with small_cache(c):
                c.execute(
                    c.dialect.replace_into("detection_state", _STATE_COLUMNS, ("cluster",)),
                    (cluster, at, format, body),
                )
                c.executemany(
                    c.dialect.replace_into("detection_state_parts", _PART_COLUMNS, ("cluster", "seq")),
                    written(),
                )
                c.execute(
                    "DELETE FROM detection_state_parts WHERE cluster = ? AND seq >= ?", (cluster, count)
                )
                [(held,)] = c.execute(
                    "SELECT count(*) FROM detection_state_parts WHERE cluster = ?", (cluster,)
                ).fetchall()
                if held != count:  # a part said unchanged is not there: the caller's record is wrong
                    raise StoreError(
                        f"save detection state failed: {count - held} of its {count} parts not stored",
                        cluster=cluster,
                    )

        def saved(c: Connection) -> None:
            save(c)
            self._keep_counts()  # the state is no alert

        self._run("save detection state", saved, write=True)

    def load_state(self, cluster: str) -> SavedState | None:
        """``cluster``'s saved detection state with its parts (None if none was saved), read through a
        small page cache like :meth:`save_state`."""

        def load(c: Connection) -> SavedState | None:
            with small_cache(c):
                row = c.execute(
                    "SELECT saved_at, format, body FROM detection_state WHERE cluster = ?", (cluster,)
                ).fetchone()
                if row is None:
                    return None
                parts = c.execute(
                    "SELECT section, body FROM detection_state_parts WHERE cluster = ? ORDER BY seq",
                    (cluster,),
                ).fetchall()
                return SavedState(row[0], row[1], row[2], tuple(parts))

        return self._run("load detection state", load)


def _fold_firing(firing: Mapping[Fingerprint, Alert], written: Sequence[Alert]) -> dict[Fingerprint, Alert]:
    """``firing`` (in seq order) after ``written``: firing ones replace or join it, others leave it.

    Sorted again only when the order may have changed: a refresh keeps its row's ``seq`` (replaced in
    place), a new row joins at the end with the newest ``seq``, a resolved one leaves; at 32,000 firing
    alerts refreshed a few hundred at a time, the sort by a Python key was most of an evaluation's fold."""
    out = dict(firing)
    if written:
        top = (next(reversed(out.values())).seq or 0) if out else 0  # (in seq order: the last, newest)
        ordered = True
        for a in written:
            fp = a.fingerprint
            old = out.get(fp)
            if a.firing:
                if old is None and (a.seq or 0) > top:
                    top = a.seq or 0
                elif old is None or old.seq != a.seq:
                    ordered = False
                out[fp] = a
            elif old is not None and old.id == a.id:
                del out[fp]  # (an older alert of this fingerprint, acknowledged: nothing)
        if not ordered:
            out = dict(sorted(out.items(), key=lambda kv: kv[1].seq or 0))
    return out
