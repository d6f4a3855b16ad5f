"""Committed offsets of every group: one OffsetFetch per coordinator, per-group retry for the failures."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, KeysView

from collectors.errors import KafkaAuthError, KafkaError
from collectors.model import ClusterMetadata, CommittedObservation, CommittedOffset, Failure
from collectors.reconcile import Reconciler
from collectors.scope import EVERYTHING, Scope
from collectors.seam import KafkaSeam, MetadataSource, SeamCollector, failure, topic_gone

log = logging.getLogger(__name__)

# Share groups keep no committed offsets (their state lives in the share coordinator).
_NO_OFFSETS = frozenset({"share"})
_FALLBACK_CONCURRENCY = 8


class CommittedCollector(SeamCollector):
    """Collects :class:`CommittedObservation` for all groups.

    Each broker lists the groups it coordinates and is asked for all of their offsets in one OffsetFetch
    (v8, many groups). Groups that fail there (moved coordinator, loading, whole request lost) get their
    coordinator looked up again and are fetched one by one; a group that still fails is a ``group``
    failure. A broker whose groups cannot even be listed is a ``broker`` failure.

    OffsetFetch leaves out, without an error, the offsets on a topic this principal may not DESCRIBE, and
    Metadata leaves the topic out: to the poll, an ACL that hides a topic looks like its offsets were
    deleted. So a topic that had committed offsets (seen by this collector, or ``known_topics`` from the
    store) and is now in neither the offsets nor the metadata, or on which a group's offsets vanished since
    its last fetch, is asked for by name (never one out of scope): if Kafka says it is
    not authorized (or cannot say), it becomes a ``topic`` failure, which tells the store and detection
    that the offsets on it were not seen, not deleted; if it is gone, it is forgotten.

    Groups out of scope are not fetched; the offsets of a fetched group on topics (or as pairs) out of
    scope are dropped from its answer.

    With a ``reconciler`` (a live ``__consumer_offsets`` tail feeds its view: :mod:`collectors.reconcile`)
    a collect answers from the tail's view, asking Kafka nothing, while that view is trusted; otherwise it
    polls as above and the poll seeds or reconciles the view.
    """

    name = "committed"

    def __init__(
        self,
        seam: KafkaSeam,
        cluster: str,
        metadata: MetadataSource,
        clock: Callable[[], float] = time.time,
        known_topics: Iterable[str] = (),
        *,
        scope: Scope = EVERYTHING,
        reconciler: Reconciler | None = None,
    ) -> None:
        super().__init__(seam, cluster, metadata, clock, scope=scope)
        self.reconciler = reconciler
        # every topic a group had offsets on, not known gone
        self._topics: set[str] = {t for t in known_topics if scope.topic_in(t)}
        self._hidden: frozenset[str] = frozenset()  # logged once per change
        self._pairs: set[tuple[str, str]] = set()  # (group, topic) with offsets at each group's last fetch
        self._names: tuple[ClusterMetadata, frozenset[str]] | None = None  # topic names of a metadata

    async def collect(self) -> CommittedObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        reconciler = self.reconciler
        if reconciler is None:
            return await self._poll()
        if await reconciler.trusted() and reconciler.same_sight(await self._topic_names()):
            return reconciler.serve()
        if reconciler.seeded:  # what the service reported: a pair gone from the poll is asked about
            self._pairs.update(reconciler.view.pairs())
            self._topics.update(reconciler.view.topics())
        poll = await self._poll()
        observed = await reconciler.polled(poll, await self._unlisted(reconciler, poll))
        reconciler.note_sight(await self._topic_names())
        return observed

    async def _topic_names(self) -> frozenset[str]:
        """The topics of the latest metadata (cached by the metadata source; empty if none can be had)."""
        try:
            meta = await self._metadata()
        except KafkaError:
            return frozenset()
        names = self._names
        if names is None or names[0] is not meta:
            names = self._names = (meta, frozenset(t.name for t in meta.topics))
        return names[1]

    async def _unlisted(self, reconciler: Reconciler, poll: CommittedObservation) -> CommittedObservation:
        """What the reconciliation compares: ``poll``, plus the groups the tail's view holds offsets of that
        no coordinator listed and none failed on, each asked for by name (a group deleted without the tail
        seeing its tombstones answers no offsets; one whose coordinator is moving fails and is skipped).
        Not after a broker failure: its groups were not listed, and asking each would be a storm."""
        if not reconciler.seeded or any(f.scope == "broker" for f in poll.failures):
            return poll
        failed = {f.key for f in poll.failures if f.scope == "group"}
        missing = sorted(g for g in reconciler.view.groups_with_offsets() - set(poll.groups) - failed)
        if not missing:
            return poll
        gone = KafkaError("no coordinator listed the group", cluster=self.cluster)
        found, lost = await self._fallback(dict.fromkeys(missing, gone))
        return CommittedObservation(
            poll.cluster,
            poll.observed_at,
            poll.offsets + tuple(o for g in sorted(found) for o in found[g]),
            tuple(sorted({*poll.groups, *found})),
            poll.failures + tuple(lost),
        )

    async def _poll(self) -> CommittedObservation:
        """Every group's committed offsets, asked of their coordinators."""
        meta = await self._metadata()
        observed_at = self._clock()
        rounds = await asyncio.gather(*(self._ask_coordinator(b.node_id) for b in meta.brokers))
        offsets: dict[str, list[CommittedOffset]] = {}
        retry: dict[str, KafkaError] = {}
        failures: list[Failure] = []
        for found, errored, lost in rounds:
            offsets.update(found)
            retry.update(errored)
            failures.extend(lost)
        if retry:
            found, lost = await self._fallback(retry)
            offsets.update(found)
            failures.extend(lost)
        groups = tuple(sorted(offsets))
        flat = tuple(o for g in groups for o in offsets[g])
        failures.extend(await self._hidden_topics(flat, offsets.keys(), meta, partial=bool(failures)))
        return CommittedObservation(self.cluster, observed_at, flat, groups, tuple(failures))

    async def _hidden_topics(
        self, flat: tuple[CommittedOffset, ...], fetched: KeysView[str], meta: ClusterMetadata, partial: bool
    ) -> list[Failure]:
        """``topic`` failures for the topics whose offsets this run may not have seen (class docstring)."""
        pairs, before = {(o.group, o.topic) for o in flat}, self._pairs
        seen = {t for _, t in pairs}
        # a group's offsets on a topic gone since its last fetch: OffsetDelete, or an ACL taken away after
        # the metadata was read (it still lists the topic); asked by name like a topic missing from it
        vanished = {t for g, t in before if (g, t) not in pairs and g in fetched}
        unseen = (self._topics - seen - {t.name for t in meta.topics}) | vanished
        if not self.scope.all_topics:  # never ask about a topic out of scope (a pair's topic is in)
            unseen = {t for t in unseen if self.scope.topic_in(t)}
        self._topics |= seen
        hidden = await self._unseen_topics(sorted(unseen)) if unseen else []
        # kept: the pairs of a hidden topic (told apart again next time), and, after a partial run, those
        # of the groups it did not fetch; a group a complete run no longer lists is forgotten (deleted)
        keep = {f.key for f in hidden}
        self._pairs = pairs | {(g, t) for g, t in before if t in keep or (partial and g not in fetched)}
        return hidden

    async def _unseen_topics(self, names: list[str]) -> list[Failure]:
        """``topic`` failures for the ``names`` Kafka hides or cannot tell about; the gone ones forgotten."""
        try:
            answers: dict[str, KafkaError | None] = await asyncio.to_thread(self._seam.topic_errors, names)
        except KafkaError as exc:
            answers = dict.fromkeys(names, exc)
        lost: list[Failure] = []
        for name in names:
            err = answers.get(name)
            if err is None and name in answers:
                continue  # created or re-authorized since the metadata was taken: the next poll sees it
            if topic_gone(err):
                self._topics.discard(name)  # deleted: its offsets went with it
                continue
            if err is None:
                err = KafkaError("Metadata did not answer for the topic", cluster=self.cluster, topic=name)
            lost.append(Failure("topic", name, type(err).__name__, f"committed offsets not seen: {err}"))
        hidden = frozenset(f.key for f in lost if f.error == KafkaAuthError.__name__)
        if hidden != self._hidden:
            self._hidden = hidden
            if hidden:
                log.warning(
                    "%s: not authorized to describe topics %s: the committed offsets on them are not seen "
                    "(grant DESCRIBE on them to User:<offsetguard principal>; docs/security.md)",
                    self.cluster,
                    ", ".join(sorted(hidden)),
                    extra={"cluster": self.cluster},
                )
        return lost

    async def _ask_coordinator(
        self, broker: int
    ) -> tuple[dict[str, list[CommittedOffset]], dict[str, KafkaError], list[Failure]]:
        try:
            listed = await asyncio.to_thread(self._seam.list_groups, broker)
        except KafkaError as exc:
            return {}, {}, [failure("broker", str(broker), exc)]
        group_in = self.scope.group_in
        ids = [g.group_id for g in listed if g.group_type not in _NO_OFFSETS and group_in(g.group_id)]
        if not ids:
            return {}, {}, []
        try:
            result = await asyncio.to_thread(self._seam.fetch_offsets, broker, ids)
        except KafkaError as exc:
            return {}, dict.fromkeys(ids, exc), []
        found: dict[str, list[CommittedOffset]] = {}
        errored: dict[str, KafkaError] = {}
        for g in ids:
            got = result.get(g)
            if isinstance(got, list):
                found[g] = self._in_scope(g, got)
            else:
                errored[g] = got or KafkaError(
                    "coordinator did not answer for the group", cluster=self.cluster, group=g
                )
        return found, errored, []

    def _in_scope(self, group: str, offsets: list[CommittedOffset]) -> list[CommittedOffset]:
        """``group``'s offsets without those on topics (or as pairs) out of scope."""
        scope = self.scope
        if scope.all_topics:
            return offsets
        return [o for o in offsets if scope.pair_in(group, o.topic)]

    async def _fallback(
        self, errored: dict[str, KafkaError]
    ) -> tuple[dict[str, list[CommittedOffset]], list[Failure]]:
        """Per-group OffsetFetch to a freshly looked-up coordinator; what still fails is recorded."""
        ids = sorted(errored)
        try:
            coordinators = await asyncio.to_thread(self._seam.find_coordinators, ids)
        except KafkaError as exc:
            return {}, [failure("group", g, exc) for g in ids]
        limit = asyncio.Semaphore(_FALLBACK_CONCURRENCY)

        async def one(group: str) -> list[CommittedOffset] | KafkaError:
            coordinator = coordinators.get(group, errored[group])
            if isinstance(coordinator, KafkaError):
                return coordinator
            async with limit:
                try:
                    got = await asyncio.to_thread(self._seam.fetch_offsets, coordinator, [group])
                except KafkaError as exc:
                    return exc
            answer = got.get(group)
            if answer is None:
                return KafkaError(
                    "coordinator did not answer for the group", cluster=self.cluster, group=group
                )
            return answer

        results = await asyncio.gather(*(one(g) for g in ids))
        found: dict[str, list[CommittedOffset]] = {}
        lost: list[Failure] = []
        for group, got in zip(ids, results, strict=True):
            if isinstance(got, list):
                found[group] = self._in_scope(group, got)
            else:
                lost.append(failure("group", group, got))
        return found, lost
