"""When the committed collector may answer from the live tail instead of asking Kafka, and what its polls
find the tail missed.

A :class:`Reconciler` holds one cluster's :class:`~collectors.tail_committed.TailCommitted` view and the
tail that feeds it (:meth:`Reconciler.attach`, told again for every new tail). The view is **trusted**
while it has been seeded by a poll made under this tail, the tail has been live (:meth:`LiveTail.live`:
caught up and reading) at every collect since the last one without an interruption
(:attr:`LiveTail.interruptions`), and the last poll was complete and at most ``every`` seconds ago. Then
:class:`~collectors.committed.CommittedCollector` hands out the view's observation and asks Kafka nothing.
Otherwise it polls, and the poll reconciles:

* the first complete poll under a tail **seeds** the view (the tail resumed from a saved position and
  read only what came after it): corrected, nothing counted;
* a later poll corrects the view at once and keeps its corrections; they are **counted** as differences
  once the tail has delivered everything up to the ``__consumer_offsets`` end offsets read after the poll
  ended, less those the tail changed since the collect before the poll (a commit made during the poll, or
  one the coordinator had not yet made visible when the tail read it: told, not missed).

A poll made while the tail was live from its start to its answer is handed on marked so
(:attr:`~collectors.model.CommittedObservation.under_tail`): detection lets it only seed what the tail has
not told, even if the tail stops or fails before the poll is judged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from collectors.errors import KafkaAuthError, KafkaError
from collectors.model import CommittedObservation, Failure
from collectors.tail_committed import Difference, TailCommitted

log = logging.getLogger(__name__)

LOGGED_KEYS = 5  # differences named in the log line of one reconciliation


class LiveTail(Protocol):
    """What the reconciler reads of the tail (:class:`collectors.tail.OffsetsTail` fits)."""

    def live(self) -> bool: ...

    @property
    def interruptions(self) -> int: ...

    @property
    def delivered(self) -> Mapping[int, int]: ...

    async def end_offsets(self) -> Mapping[int, int]: ...


@dataclass(slots=True)
class _Pending:
    """Corrections of one or more polls, counted once the tail has read up to ``ends``."""

    since: int  # view.seq at the collect before the (first) poll
    corrections: dict[tuple[str, str, int], Difference]
    polls: int
    ends: Mapping[int, int] | None = None  # __consumer_offsets end offsets read after the (last) poll


@dataclass(frozen=True, slots=True)
class LastReconciliation:
    at: float  # when its differences were counted (epoch seconds)
    differences: int
    kinds: Mapping[str, int]  # missed_commit, missed_tombstone, differs


class Reconciler:
    """See the module docstring. ``every``: seconds between reconciling polls while the view is trusted."""

    def __init__(
        self,
        view: TailCommitted,
        every: float,
        *,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        failing_groups: Callable[[], Collection[str]] = tuple,
    ) -> None:
        self.view = view
        # the groups the groups collector could not see lately: a poll would not see them either
        self._failing_groups = failing_groups
        self._missing: frozenset[str] = frozenset()  # view topics not in the metadata at the last poll
        self.cluster = view.cluster
        self.every = every
        self._clock = clock
        self._monotonic = monotonic
        self._tail: LiveTail | None = None
        self._seeded = False
        self._complete_at: float | None = None  # monotonic time of the last complete poll
        self._hidden: tuple[Failure, ...] = ()  # the topics an ACL hides from the last complete poll
        self._watch: tuple[bool, int] | None = None  # (live, interruptions) at the last collect
        self._gap = True  # not live at some collect since the last poll
        self._before = 0  # view.seq at the last collect
        self._since = 0  # view.seq at the collect before this one: keys changed after it are not judged
        self._pending: _Pending | None = None
        self.runs = 0  # polls compared (seeds not counted)
        self.differences = 0
        self.last: LastReconciliation | None = None
        self.served = 0  # collects answered from the view without a poll

    def attach(self, tail: LiveTail) -> None:
        """A new tail feeds the view from now on: unseeded until a poll made under it."""
        self._tail = tail
        self._seeded = False
        self._pending = None
        self._watch = None
        self._gap = True

    # ------------------------------------------------------------------ one collect
    async def trusted(self) -> bool:
        """Called at the start of each collect: settles a pending reconciliation the tail has caught up
        with, and says whether this collect may answer from the view."""
        tail = self._tail
        if tail is None:
            return False
        live = tail.live()
        watch = (live, tail.interruptions)
        if watch != self._watch or not live:
            self._gap = True  # an error, a restart, a catch-up: poll at once
        self._watch = watch
        self._since, self._before = self._before, self.view.seq
        await self._settle(tail)
        fresh = self._complete_at is not None and self._monotonic() - self._complete_at < self.every
        return self._seeded and live and not self._gap and fresh

    def same_sight(self, topics: Collection[str]) -> bool:
        """Whether a poll would see what the last one saw, as far as the other observations tell (``topics``:
        the latest metadata's): no topic the view holds offsets on newly missing from the metadata (an ACL
        taken away hides a topic there, as from OffsetFetch), no topic hidden at the last poll back in it,
        no group the groups collector could not see. Otherwise the collect polls now, as it did every time
        before the tail stood in for it."""
        if any(t in topics for t in self._hidden_names) or self._failing_groups():
            return False
        missing = self._missing
        return all(t in topics or t in missing for t in self.view.topics())

    def note_sight(self, topics: Collection[str]) -> None:
        """After a poll: the view's topics not in the metadata (``topics``) are what that poll saw too."""
        self._missing = frozenset(t for t in self.view.topics() if t not in topics)

    def serve(self) -> CommittedObservation:
        """The view's observation for a collect that asks Kafka nothing."""
        self.served += 1
        return self.observation()

    @property
    def _hidden_names(self) -> frozenset[str]:
        return frozenset(f.key for f in self._hidden)

    def observation(self) -> CommittedObservation:
        """The view's observation, now (offsets on the topics the last poll could not see left out)."""
        return self.view.observation(self._clock(), self._hidden_names, self._hidden)

    @property
    def tail(self) -> LiveTail | None:
        """The tail feeding the view now (None: none was attached, as on an ha standby)."""
        return self._tail

    @property
    def seeded(self) -> bool:
        """Whether a complete poll under the current tail has seeded the view."""
        return self._seeded

    async def polled(
        self, poll: CommittedObservation, compared: CommittedObservation | None = None
    ) -> CommittedObservation:
        """Reconcile with ``poll`` (made by this collect), or with ``compared``: the poll plus groups asked
        for by name for the comparison only; what the collect hands on: the view's observation when the
        view can stand in for it, else the poll itself."""
        tail = self._tail
        if tail is None:
            return poll
        since = self._since
        corrections = self.view.apply_poll(compared if compared is not None else poll, since)
        complete = all(f.scope == "topic" and f.error == KafkaAuthError.__name__ for f in poll.failures)
        if not self._seeded:
            self._seeded = complete  # a seed: nothing to count (the tail never had what came before it)
        else:
            self._queue(corrections, since)
            if tail.live():
                self._pending_ends(await _ends(tail, self.cluster))
        if complete:
            self._complete_at = self._monotonic()
            self._hidden = poll.failures
            self._gap = False
        if self._seeded and complete and tail.live():
            return self.observation()
        # live when this collect began (no failure since) and still: the tail had every commit made before
        # the poll was sent, and was reading on when it was answered
        under = self._watch == (True, tail.interruptions) and tail.live()
        return replace(poll, under_tail=True) if under else poll

    # ------------------------------------------------------------------ counting
    def _queue(self, corrections: list[Difference], since: int) -> None:
        pending = self._pending
        if pending is None:
            self._pending = _Pending(since, {d.key: d for d in corrections}, 1)
            return
        # still waiting for the tail: one reconciliation, from the earliest poll's point
        for d in corrections:
            pending.corrections.setdefault(d.key, d)
        pending.since = min(pending.since, since)
        pending.polls += 1
        pending.ends = None  # read again after this poll

    def _pending_ends(self, ends: Mapping[int, int] | None) -> None:
        if self._pending is not None and ends is not None:
            self._pending.ends = ends

    async def _settle(self, tail: LiveTail) -> None:
        pending = self._pending
        if pending is None or not tail.live():
            return
        if pending.ends is None:
            pending.ends = await _ends(tail, self.cluster)
            if pending.ends is None:
                return
        delivered = tail.delivered
        if any(delivered.get(p, -1) < end for p, end in pending.ends.items()):
            return  # the tail has not read everything written before the poll ended yet
        self._pending = None
        found = self.view.confirmed(pending.corrections.values(), pending.since)
        self.view.forget_before(pending.since)
        self.runs += pending.polls
        self.differences += len(found)
        kinds = Counter(d.kind for d in found)
        self.last = LastReconciliation(self._clock(), len(found), dict(kinds))
        if found:
            shown = sorted(found, key=lambda d: d.key)[:LOGGED_KEYS]
            log.warning(
                "%s: reconciliation found %d committed offset(s) the tail missed (%s), corrected from the "
                "poll: %s%s",
                self.cluster,
                len(found),
                ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())),
                "; ".join(d.describe() for d in shown),
                f" and {len(found) - len(shown)} more" if len(found) > len(shown) else "",
                extra={"cluster": self.cluster},
            )
        else:
            log.debug("%s: reconciliation found no difference", self.cluster, extra={"cluster": self.cluster})

    def as_dict(self) -> dict[str, Any]:
        """``/readyz``'s view of it: whether the tail stands in for the poll, and the last reconciliation."""
        last = self.last
        return {
            "cluster": self.cluster,
            "source": "tail" if self._seeded and not self._gap else "poll",
            "seeded": self._seeded,
            "every_seconds": self.every,
            "runs": self.runs,
            "differences": self.differences,
            "served_from_tail": self.served,
            "offsets": self.view.size,
            "last": None
            if last is None
            else {"at": last.at, "differences": last.differences, "kinds": dict(last.kinds)},
        }


async def _ends(tail: LiveTail, cluster: str) -> Mapping[int, int] | None:
    """The tail's end offsets now; None when Kafka cannot tell (asked again at the next collect)."""
    try:
        return await tail.end_offsets()
    except KafkaError as exc:
        log.info(
            "%s: __consumer_offsets end offsets unavailable: %s", cluster, exc, extra={"cluster": cluster}
        )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        # the Kafka client let out a cancellation of its own (collectors.tail): asked again next time
    return None
