"""Committed offsets as the live tail reports them: what a committed-offsets poll would return, kept up to
date by the ``__consumer_offsets`` records instead of asked for.

:class:`TailCommitted` is a :class:`collectors.tail_model.TailSink` and otherwise pure (no I/O, no clock):
``OffsetCommit`` sets a ``(group, topic, partition)``, ``OffsetCommitTombstone`` removes it (offset
deletion, expiry, group deletion), a classic or consumer group's metadata record says the group exists and
its tombstone that it was deleted. The tail has already dropped the records out of the cluster's scope.

What the tail cannot know (the offsets committed before the position it resumed from) comes from a poll:
:meth:`TailCommitted.apply_poll` seeds the view, and later reconciles it, from a
:class:`CommittedObservation`, leaving alone the keys the tail changed after a given point (its per-key
change counter, :attr:`TailCommitted.seq`): those are newer than the poll, or being told right now.
"""

from __future__ import annotations

from collections.abc import Iterable, KeysView, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import cast

from collectors.codec.consumer_group_records import ConsumerGroupMetadata
from collectors.codec.record_types import CONSUMER_GROUP_METADATA, GROUP_METADATA
from collectors.codec.records import GroupMetadata, GroupTombstone, OffsetCommit, OffsetCommitTombstone
from collectors.model import CommittedObservation, CommittedOffset, Failure
from collectors.tail_model import TailEvent

Key = tuple[str, str, int]  # (group, topic, partition)
_GROUP_TYPES = (GROUP_METADATA, CONSUMER_GROUP_METADATA)  # a tombstone of these deletes the group


@dataclass(frozen=True, slots=True)
class Difference:
    """A key on which a poll and the tail's view disagreed: ``tail`` or ``poll`` None where it had none."""

    key: Key
    tail: CommittedOffset | None
    poll: CommittedOffset | None

    @property
    def kind(self) -> str:
        """``missed_commit`` (only the poll has it), ``missed_tombstone`` (only the tail) or ``differs``."""
        if self.tail is None:
            return "missed_commit"
        return "missed_tombstone" if self.poll is None else "differs"

    def describe(self) -> str:
        group, topic, partition = self.key
        return f"{group}/{topic}/{partition} {self.kind} (tail {_show(self.tail)}, poll {_show(self.poll)})"


def _show(o: CommittedOffset | None) -> str:
    return "none" if o is None else f"{o.offset}@{o.leader_epoch}"


class TailCommitted:
    """One cluster's committed offsets from its tail (see the module docstring).

    ``seq`` counts the batches applied; each key and group remembers the ``seq`` of its last record, so
    "changed by the tail after ``since``" is one comparison. The observation's flat tuple is rebuilt only
    when something changed since the last one (re-sorting only the groups that changed), and an offset
    re-committed at the same value keeps its :class:`CommittedOffset` object.
    """

    def __init__(self, cluster: str) -> None:
        self.cluster = cluster
        self.seq = 0
        self._offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._alive: set[str] = set()  # groups a record or a poll says exist (offsets or not)
        self._stamp: dict[Key, int] = {}  # seq of each key's last record
        self._group_stamp: dict[str, int] = {}  # seq of each group's last record
        self._pairs: dict[tuple[str, str], int] = {}  # offsets held per (group, topic)
        self._topics: dict[str, int] = {}  # offsets held per topic
        self._dirty: set[str] = set()  # groups whose offsets changed since the last observation
        self._runs: dict[str, tuple[CommittedOffset, ...]] = {}  # each group's offsets, sorted
        self._groups: tuple[str, ...] = ()
        self._flat: tuple[CommittedOffset, ...] = ()
        self._stale = True  # the group list or a run must be rebuilt
        self._keys: frozenset[Key] | None = None  # every key held, one set while none comes or goes
        # the offsets less those on the hidden topics: (hidden, the flat tuple it was built from, result)
        self._hidden: tuple[frozenset[str], tuple[CommittedOffset, ...], tuple[CommittedOffset, ...]] | None
        self._hidden = None

    # ------------------------------------------------------------------ the tail's side
    async def on_events(self, events: Sequence[TailEvent]) -> None:
        self.apply(events)

    def apply(self, events: Iterable[TailEvent]) -> None:
        """Apply records in log order (each partition's in offset order, as the tail hands them)."""
        self.seq += 1
        seq = self.seq
        stamp, offsets = self._stamp, self._offsets
        for event in events:
            record = event.record
            kind = type(record)  # the codec's own classes: no subclass to look for
            if kind is OffsetCommit:
                r = cast(OffsetCommit, record)
                group, tp = r.group, (r.topic, r.partition)
                stamp[(group, *tp)] = seq
                parts = offsets.get(group)
                old = parts.get(tp) if parts is not None else None
                epoch = r.leader_epoch
                if epoch is not None and epoch < 0:
                    epoch = None
                if (
                    old is not None
                    and old.offset == r.offset
                    and old.leader_epoch == epoch
                    and old.metadata == r.metadata
                ):
                    continue  # re-committed unchanged (most commits): the same object, nothing to rebuild
                self._commit(r, tp, epoch)
            elif kind is OffsetCommitTombstone:
                t = cast(OffsetCommitTombstone, record)
                key = (t.group, t.topic, t.partition)
                stamp[key] = seq
                self._remove(key)
            elif kind is GroupMetadata or kind is ConsumerGroupMetadata:
                group = cast(GroupMetadata | ConsumerGroupMetadata, record).group
                self._group_stamp[group] = seq
                if group not in self._alive:
                    self._alive.add(group)
                    self._stale = True
            elif kind is GroupTombstone:
                g = cast(GroupTombstone, record)
                if g.record_type not in _GROUP_TYPES or g.member_id is not None:
                    continue  # one member's record, or another group record type: the group stays
                # the group itself deleted; its offsets have tombstones of their own (a group converted
                # between classic and consumer keeps them)
                self._group_stamp[g.group] = seq
                if g.group in self._alive:
                    self._alive.discard(g.group)
                    self._stale = True

    def _commit(self, r: OffsetCommit, tp: tuple[str, int], epoch: int | None) -> None:
        """A new or moved offset (or -1: none, as a poll reports it)."""
        group = r.group
        if r.offset < 0:  # OffsetFetch answers -1: the poll reports no offset
            self._remove((group, *tp))
            return
        parts = self._offsets.get(group)
        if parts is None:
            parts = self._offsets[group] = {}
            self._stale = True
        if tp not in parts:
            self._count(group, r.topic, 1)
        parts[tp] = CommittedOffset(group, r.topic, r.partition, r.offset, epoch, r.metadata)
        self._dirty.add(group)

    def _count(self, group: str, topic: str, n: int) -> None:
        """A key came (``n`` +1) or went (-1): keep the (group, topic) pairs and the topics holding offsets
        counted, and the key set is to be built again."""
        self._keys = None
        pair = (group, topic)
        left = self._pairs.get(pair, 0) + n
        if left:
            self._pairs[pair] = left
        else:
            del self._pairs[pair]
        left = self._topics.get(topic, 0) + n
        if left:
            self._topics[topic] = left
        else:
            del self._topics[topic]

    def _remove(self, key: Key) -> CommittedOffset | None:
        parts = self._offsets.get(key[0])
        if parts is None:
            return None
        old = parts.pop(key[1:], None)
        if old is not None:
            self._count(key[0], key[1], -1)
            self._dirty.add(key[0])
            if not parts:
                del self._offsets[key[0]]
                self._stale = True
        return old

    def _put(self, offset: CommittedOffset) -> None:
        parts = self._offsets.get(offset.group)
        if parts is None:
            parts = self._offsets[offset.group] = {}
            self._stale = True
        tp = (offset.topic, offset.partition)
        if tp not in parts:
            self._count(offset.group, offset.topic, 1)
        parts[tp] = offset
        self._dirty.add(offset.group)

    # ------------------------------------------------------------------ reading
    def get(self, key: Key) -> CommittedOffset | None:
        parts = self._offsets.get(key[0])
        return parts.get(key[1:]) if parts is not None else None

    def changed_since(self, key: Key, since: int) -> bool:
        """Whether a record of ``key`` was applied after batch ``since``."""
        return self._stamp.get(key, 0) > since

    @property
    def size(self) -> int:
        """Committed offsets held."""
        return sum(len(parts) for parts in self._offsets.values())

    def groups_with_offsets(self) -> frozenset[str]:
        return frozenset(self._offsets)

    def pairs(self) -> KeysView[tuple[str, str]]:
        """The (group, topic) pairs it holds offsets of."""
        return self._pairs.keys()

    def topics(self) -> KeysView[str]:
        """The topics it holds offsets on."""
        return self._topics.keys()

    def observation(
        self, observed_at: float, hidden: frozenset[str] = frozenset(), failures: tuple[Failure, ...] = ()
    ) -> CommittedObservation:
        """The offsets as a poll lists them (groups sorted, each group's offsets by topic and partition);
        those on ``hidden`` topics left out, as a poll that may not see them leaves them out. Without
        hidden topics the observation carries the keys as one set, the same object while no key came or
        went (:attr:`CommittedObservation.keys`)."""
        self._rebuild()
        flat = self._flat
        keys = None
        if hidden:
            held = self._hidden
            if held is None or held[0] != hidden or held[1] is not flat:
                held = self._hidden = (hidden, flat, tuple(o for o in flat if o.topic not in hidden))
            flat = held[2]
        else:
            keys = self._keys
            if keys is None:
                keys = self._keys = frozenset((g, *tp) for g, parts in self._offsets.items() for tp in parts)
        return CommittedObservation(
            self.cluster,
            observed_at,
            flat,
            self._groups,
            failures,
            from_tail=True,
            under_tail=True,
            keys=keys,
        )

    # ------------------------------------------------------------------ a poll's side
    def apply_poll(self, poll: CommittedObservation, since: int) -> list[Difference]:
        """Correct the view from ``poll`` and return the corrections: for each group the poll fetched
        (``poll.groups``: without failure), every offset on a topic it could see, except the keys whose
        record the tail applied after batch ``since`` (newer than the poll, or being told now)."""
        hidden = poll.unseen_topics()
        polled: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        for o in poll.offsets:
            polled.setdefault(o.group, {})[(o.topic, o.partition)] = o
        stamp, group_stamp = self._stamp, self._group_stamp
        out: list[Difference] = []
        for group in poll.groups:
            if group not in self._alive and group_stamp.get(group, 0) <= since:
                self._alive.add(group)  # listed and fetched: it exists (it may have no offsets)
                self._stale = True
            mine = dict(self._offsets.get(group, {}))
            theirs = polled.get(group, {})
            for tp, o in theirs.items():
                key = (group, *tp)
                if tp[0] in hidden or stamp.get(key, 0) > since:
                    continue
                current = mine.get(tp)
                if current is o or (
                    current is not None
                    and current.offset == o.offset
                    and current.leader_epoch == o.leader_epoch
                    and current.metadata == o.metadata
                ):
                    continue
                out.append(Difference(key, current, o))
                self._put(o)
            for tp, current in mine.items():
                key = (group, *tp)
                if tp in theirs or tp[0] in hidden or stamp.get(key, 0) > since:
                    continue
                out.append(Difference(key, current, None))
                self._remove(key)
        return out

    def confirmed(self, corrections: Iterable[Difference], since: int) -> list[Difference]:
        """The ``corrections`` of a poll whose keys the tail still has not changed after batch ``since``
        (once it has read everything written before the poll ended: the others were not missed, only
        not told yet)."""
        stamp = self._stamp
        return [d for d in corrections if stamp.get(d.key, 0) <= since]

    def forget_before(self, seq: int) -> None:
        """Drop the change counters at or below ``seq``: no comparison will look further back, and a key
        without one counts as unchanged since any batch."""
        self._stamp = {k: n for k, n in self._stamp.items() if n > seq}
        self._group_stamp = {g: n for g, n in self._group_stamp.items() if n > seq}

    def _rebuild(self) -> None:
        if not self._dirty and not self._stale:
            return
        runs = self._runs
        for group in self._dirty:
            parts = self._offsets.get(group)
            if parts:
                runs[group] = tuple(parts[k] for k in sorted(parts))
            else:
                runs.pop(group, None)
        self._dirty.clear()
        if self._stale:  # a group came or went
            self._groups = tuple(sorted(self._alive.union(self._offsets)))
            self._stale = False
        self._flat = tuple(chain.from_iterable(runs[g] for g in self._groups if g in runs))
