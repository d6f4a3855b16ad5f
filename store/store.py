"""The :class:`Store`: one SQLite file holding offset history, safe to call from worker threads.

Writes go through one connection guarded by a lock (SQLite allows one writer at a time anyway); reads
use one connection per calling thread, which WAL mode lets run alongside a write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from types import TracebackType
from typing import TypeVar

import store.changes as changes
import store.queries as queries
import store.retention as retention
import store.snapshots as snapshot_index
from collectors.errors import StoreError, StoreWriteError
from collectors.model import ClusterMetadata, CommittedObservation, OffsetsObservation
from collectors.snapshots import SnapshotInfo
from store.committed import CommittedWriter
from store.db import Connection, database_errors, describe, transaction, translated, write_failure
from store.health import StoreHealth
from store.log_end_memory import LogEndMemory, LookupCounter, LookupCounts
from store.log_end_times import Wanted, log_end_reached_at_many
from store.opening import open_migrated
from store.partitions import PartitionPlan, PartitionWriter
from store.readers import Readers
from store.records import (
    CommittedPoint,
    LatestCommitted,
    LatestPartition,
    PartitionPoint,
    TailPosition,
    ThinCounts,
    WriteCounts,
)
from store.settings import StoreSettings

T = TypeVar("T")


log = logging.getLogger(__name__)
_TAIL_COLUMNS = ("cluster", "partition", "next_offset", "updated_at")


class Store:
    """Offset history for every watched cluster. Build with :meth:`open`; close with :meth:`close`."""

    def __init__(self, settings: StoreSettings, writer: Connection) -> None:
        self._settings = settings
        self._writer = writer
        self._write_lock = threading.Lock()
        self._readers = Readers(settings, "store")
        self._closed = False
        # Shared with the file's other store classes (service.runtime). A refused history write is given
        # up, not kept: the writers' latest values advance only on commit, so the first write that
        # commits again stores every value that changed meanwhile; the changes in between are lost.
        self.health = StoreHealth(describe(settings))
        # On a shared database (PostgreSQL): the history's change counter as of this store's last write
        # (store.changes); another replica's write since makes the writers reload their latest values.
        self._shared = writer.dialect.shared
        self._version = 0
        # With ha on: the lease epoch this replica writes the history at, None while it may not write
        # (a standby, a lease run out). None: this process is the database's only writer. The kept
        # log-end rows answer only while this replica writes, and only rows written at its epoch.
        self.writer_epoch: Callable[[], int | None] | None = None
        self._lookups = LookupCounter()
        with translated("load latest values"):
            self._load_writers()

    def _load_writers(self) -> None:
        """The writers' latest values from the database (and the counter they are as of)."""
        if self._shared:
            self._version = changes.current(self._writer, changes.HISTORY)
        self._committed = CommittedWriter(self._writer)
        self._partitions = PartitionWriter(self._writer, self._version if self._shared else None)

    def reload_latest(self) -> None:
        """Read the writers' latest values again: another process wrote the history since they were read
        (a replica promoted to active on a shared SQLite file, issue 46; PostgreSQL's counters do it)."""
        with self._writing("reload latest values"):
            self._partitions.log_ends.clear()  # even if the load fails: another process wrote
            self._load_writers()

    @classmethod
    def open(cls, settings: StoreSettings) -> Store:
        """Open (creating and migrating as needed) the database at ``settings.path``."""
        conn = open_migrated(settings, "store")
        try:
            return cls(settings, conn)
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        """Close every connection; later calls raise :class:`StoreError`. Idempotent."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            try:  # the last-seen times only the writers remember (see PartitionWriter)
                with transaction(self._writer):
                    self._partitions.flush_seen()
                    self._committed.flush_seen()
            except database_errors() as exc:
                log.warning("store: last-seen times not saved at close: %s", exc)
            self._readers.close()
            self._writer.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def _writing(self, action: str, cluster: str | None = None) -> Iterator[Connection]:
        """The writer under the lock; a refused write goes to ``health``."""
        with self._write_lock:
            try:
                with translated(action, cluster=cluster):
                    if self._closed:
                        raise StoreError(f"{action} failed: the store is closed", cluster=cluster)
                    if self._shared and self._stale():
                        self._load_writers()  # another replica wrote history: plan against its values
                    yield self._writer
            except StoreWriteError as exc:
                self.health.failed(exc)
                raise
            self.health.succeeded()

    @contextmanager
    def _history(self, rows: int) -> Iterator[None]:
        """Counts ``rows`` history rows as dropped if the disk refuses the block's write."""
        try:
            yield
        except database_errors(OSError) as exc:
            if write_failure(exc) is not None:
                self.health.dropped(rows)
            raise

    def _stale(self) -> bool:
        """Another replica wrote history since this store's last write (a failure to tell is left to the
        write that follows: it meets the same failure, and counts the rows it gives up)."""
        try:
            return changes.current(self._writer, changes.HISTORY) != self._version
        except database_errors():
            return False

    @contextmanager
    def _history_transaction(self, conn: Connection) -> Iterator[None]:
        """A write transaction of the latest values; on a shared database it bumps the history's change
        counter, and refuses to write over another replica's write made since the writers were planned
        against (the next call reloads them)."""
        with transaction(conn):
            version = changes.bump(conn, changes.HISTORY) if self._shared else None
            if version is not None and version != self._version + 1:
                raise StoreError("the history was written by another replica meanwhile: planned again next")
            yield
        if version is not None:
            self._version = version
            self._partitions.log_ends.version = version  # its rows are this write's (store.log_end_memory)

    def _read(self, action: str, query: Callable[[Connection], T], cluster: str | None = None) -> T:
        with translated(action, cluster=cluster), self._readers.connection(action, cluster) as conn:
            return query(conn)

    # ------------------------------------------------------------------ writes

    def record_committed(self, obs: CommittedObservation) -> WriteCounts:
        """Store the committed offsets that changed, and deletions within the groups ``obs`` fetched."""
        with self._writing("record committed offsets", obs.cluster) as conn:
            plan = self._committed.plan(obs)
            with self._history(len(plan.history)), self._history_transaction(conn):
                counts = self._committed.write(plan)
            self._committed.apply(plan)
            return counts

    def record_offsets(self, obs: OffsetsObservation) -> WriteCounts:
        """Store the partition log starts/ends (and leaders, where set) that changed."""
        return self._record_partitions(
            "record partition offsets", obs.cluster, PartitionWriter.plan_offsets, obs
        )

    def record_metadata(self, meta: ClusterMetadata) -> WriteCounts:
        """Store the partition leaders and leader epochs that changed."""
        return self._record_partitions(
            "record cluster metadata", meta.cluster, PartitionWriter.plan_metadata, meta
        )

    def _record_partitions(
        self, action: str, cluster: str, planner: Callable[[PartitionWriter, T], PartitionPlan], obs: T
    ) -> WriteCounts:
        with self._writing(action, cluster) as conn:
            # the writer as of now: _writing may have loaded it again (another replica wrote meanwhile)
            plan = planner(self._partitions, obs)
            try:
                with self._history(len(plan.history)), self._history_transaction(conn):
                    counts = self._partitions.write(plan)
            except BaseException:
                self._partitions.abandon(plan)
                raise
            self._partitions.apply(plan)
            return counts

    def set_tail_position(self, cluster: str, partition: int, next_offset: int, updated_at: float) -> None:
        """Remember where tailing ``__consumer_offsets`` partition ``partition`` resumes."""
        with self._writing("set tail position", cluster) as conn, transaction(conn):
            conn.execute(
                conn.dialect.replace_into("tail_positions", _TAIL_COLUMNS, ("cluster", "partition")),
                (cluster, partition, next_offset, updated_at),
            )

    def add_snapshot(self, info: SnapshotInfo) -> None:
        """Index a snapshot written to disk (replaces a row with the same id)."""
        with self._writing("index snapshot", info.cluster) as conn, transaction(conn):
            snapshot_index.add(conn, info)

    def delete_snapshot(self, snapshot_id: str) -> bool:
        """Drop a snapshot's index row (its files are retention's business); False if there was none."""
        with self._writing("delete snapshot index row") as conn, transaction(conn):
            return snapshot_index.delete(conn, snapshot_id)

    def thin(self, now: float) -> ThinCounts:
        """Thin history older than the full-resolution window and expire history past retention."""
        s = self._settings
        horizons = retention.Horizons.at(
            now,
            full_resolution_hours=s.full_resolution_hours,
            retention_days=s.retention_days,
            bucket_seconds=s.thinned_bucket_seconds,
        )
        totals: dict[str, tuple[int, int]] = {}
        for kind in retention.HISTORY_TABLES:
            with self._writing("thin history") as conn:
                with transaction(conn):  # retention reads the history's merged rows (store.recent)
                    (self._committed if kind == "committed" else self._partitions).merge_recent()
                chunks = retention.key_chunks(conn, kind)
                if kind == "partitions":  # before any delete: what the kept log-end rows may lose
                    self._partitions.log_ends.trim(retention.deletes_before(horizons))
            thinned = expired = 0
            for lo, hi in chunks:
                # One transaction per chunk, lock released in between so observations keep flowing.
                with self._writing("thin history") as conn, transaction(conn):
                    t, e = retention.prune_chunk(conn, kind, lo, hi, horizons)
                thinned, expired = thinned + t, expired + e
            totals[kind] = (thinned, expired)
        return ThinCounts(
            committed_thinned=totals["committed"][0],
            committed_expired=totals["committed"][1],
            partitions_thinned=totals["partitions"][0],
            partitions_expired=totals["partitions"][1],
        )

    # ------------------------------------------------------------------ reads

    def latest_committed(
        self, cluster: str, group: str, *, include_deleted: bool = False
    ) -> tuple[LatestCommitted, ...]:
        """The newest committed value of each partition of ``group`` (deleted ones only if asked)."""
        rows = self._read(
            "read latest committed offsets",
            lambda c: queries.latest_committed(c, cluster, group, include_deleted=include_deleted),
            cluster,
        )
        seen = self._committed.seen_at
        return tuple(
            r
            if (at := seen(cluster, group, r.topic)) is None or at <= r.last_seen_at
            else replace(r, last_seen_at=at)
            for r in rows
        )

    def committed_topics(self, cluster: str) -> tuple[str, ...]:
        """Every topic some group of ``cluster`` has a live committed offset on, as last recorded."""
        return self._read("read committed topics", lambda c: queries.committed_topics(c, cluster), cluster)

    def committed_history(
        self,
        cluster: str,
        group: str,
        *,
        topic: str | None = None,
        partition: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[CommittedPoint, ...]:
        """Stored changes of ``group``'s committed offsets in ``[since, until]``, by partition then time."""
        return self._read(
            "read committed history",
            lambda c: queries.committed_history(c, cluster, group, topic, partition, since, until),
            cluster,
        )

    def committed_at(self, cluster: str, group: str, at: float) -> tuple[CommittedPoint, ...]:
        """``group``'s committed offsets as they stood at ``at`` (partitions deleted by then left out)."""
        return self._read(
            "read committed offsets at a time", lambda c: queries.committed_at(c, cluster, group, at), cluster
        )

    def range_samples(
        self, cluster: str | None = None, *, since: float | None = None, until: float | None = None
    ) -> list[queries.RangeRow]:
        """Log-range changes as ``(cluster, topic, partition, at ms, log_start, log_end)`` rows."""
        return self._read("read log ranges", lambda c: queries.range_samples(c, cluster, since, until))

    def partition_history(
        self,
        cluster: str,
        topic: str,
        *,
        partition: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[PartitionPoint, ...]:
        """Stored changes of ``topic``'s partition states in ``[since, until]``, by partition then time."""
        return self._read(
            "read partition history",
            lambda c: queries.partition_history(c, cluster, topic, partition, since, until),
            cluster,
        )

    def latest_partitions(self, cluster: str, topic: str | None = None) -> tuple[LatestPartition, ...]:
        """The newest state of every partition of ``cluster`` (or of one topic)."""
        rows = self._read(
            "read latest partitions", lambda c: queries.latest_partitions(c, cluster, topic), cluster
        )
        seen = self._partitions.seen_at
        return tuple(
            r
            if (at := seen(r.cluster, r.topic, r.partition)) is None or at <= r.last_seen_at
            else replace(r, last_seen_at=at)
            for r in rows
        )

    def partition_at(self, cluster: str, topic: str, partition: int, at: float) -> PartitionPoint | None:
        """The partition's state (log end included) as stored at or before ``at``; None if none was."""
        return self._read(
            "read partition state at a time",
            lambda c: queries.partition_at(c, cluster, topic, partition, at),
            cluster,
        )

    def log_end_reached_at(
        self, cluster: str, topic: str, partition: int, offset: int, *, until: float | None = None
    ) -> float | None:
        """The earliest observation time at which the log end had reached ``offset`` (and stayed there).

        None if it has not (by ``until``). Resolution is the offsets collector's interval, or the thinning
        bucket for thinned history: the answer is never earlier than the real time.
        """
        memory = self._log_ends()
        known, at = memory.reached_at((cluster, topic, partition), offset, until) if memory else (False, None)
        if known and memory is not None and memory.version is None:
            self._lookups.add(1, 0)
            return at

        def query(c: Connection) -> float | None:
            if known and memory is not None and changes.current(c, changes.HISTORY) == memory.version:
                self._lookups.add(1, 0)
                return at
            self._lookups.add(0, 1)
            return queries.log_end_reached_at(c, cluster, topic, partition, offset, until)

        return self._read("find when the log end reached an offset", query, cluster)

    def log_end_reached_at_many(self, cluster: str, wanted: Iterable[Wanted]) -> dict[Wanted, float]:
        """:meth:`log_end_reached_at` for many ``(topic, partition, offset)`` at once (one statement)."""
        memory = self._log_ends()
        requests = set(wanted)
        if memory is None:
            self._lookups.add(0, len(requests))
            query = partial(log_end_reached_at_many, cluster=cluster, wanted=requests)
            return self._read("find when log ends reached offsets", query, cluster)
        found, rest = memory.reached_at_many(cluster, requests)
        if memory.version is None and not rest:
            self._lookups.add(len(requests), 0)
            return found

        def many(c: Connection) -> dict[Wanted, float]:
            answers, asked = found, rest
            if memory.version is not None and changes.current(c, changes.HISTORY) != memory.version:
                answers, asked = {}, list(requests)  # another replica wrote meanwhile: all of them to SQL
            self._lookups.add(len(requests) - len(asked), len(asked))
            return {**answers, **log_end_reached_at_many(c, cluster, asked)} if asked else answers

        return self._read("find when log ends reached offsets", many, cluster)

    def _log_ends(self) -> LogEndMemory | None:
        """The kept log-end rows while only this process writes the history (store.log_end_memory)."""
        if self._closed:
            return None  # the read says the store is closed
        memory = self._partitions.log_ends
        if self.writer_epoch is not None:
            epoch = self.writer_epoch()
            if epoch is None:
                return None
            memory.hold(epoch)  # rows kept before a promotion at another epoch are forgotten
        return memory

    def log_end_lookups(self) -> LookupCounts:
        """Crossing times answered from the kept log-end rows, and those asked of SQL, so far."""
        return self._lookups.counts()

    def tail_position(self, cluster: str, partition: int) -> TailPosition | None:
        """Where tailing ``partition`` of ``__consumer_offsets`` resumes; None if never set."""
        return self._read(
            "read tail position",
            lambda c: next(iter(queries.tail_positions(c, cluster, partition)), None),
            cluster,
        )

    def tail_positions(self, cluster: str) -> tuple[TailPosition, ...]:
        """Every stored tail position of ``cluster``, by partition."""
        return self._read("read tail positions", lambda c: queries.tail_positions(c, cluster, None), cluster)

    def clusters(self) -> tuple[str, ...]:
        """Every cluster the store holds history for."""
        return self._read("list clusters", queries.clusters)

    def groups(self, cluster: str) -> tuple[str, ...]:
        """Every group of ``cluster`` that ever had a committed offset stored."""
        return self._read("list groups", lambda c: queries.groups(c, cluster), cluster)

    def snapshots(self, cluster: str | None = None, group: str | None = None) -> tuple[SnapshotInfo, ...]:
        """Indexed snapshots, oldest first, of one cluster and/or group (None: all)."""
        return self._read("list snapshots", lambda c: snapshot_index.listed(c, cluster, group), cluster)

    def snapshot(self, snapshot_id: str) -> SnapshotInfo | None:
        """The index row of one snapshot, or None."""
        return self._read("read snapshot", lambda c: snapshot_index.one(c, snapshot_id))
