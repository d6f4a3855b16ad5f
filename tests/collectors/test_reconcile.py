"""CommittedCollector with a Reconciler over a fake seam and a literal tail: the tail's view served without
a Kafka request while trusted, a poll at once after a gap, seed vs reconcile, differences counted once the
tail has read past the poll."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from collectors.committed import CommittedCollector
from collectors.errors import KafkaAuthError, KafkaResponseError, KafkaUnavailableError
from collectors.model import ClusterMetadata, CommittedOffset
from collectors.reconcile import Reconciler
from collectors.seam import ListedGroup
from collectors.tail_committed import TailCommitted
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, partition, snapshot, source
from tests.collectors.test_tail_committed import commit, tombstone

META = metadata([1], {"t": [partition("t", 0, 1), partition("t", 1, 1)]})


def co(group: str, partition: int, offset: int) -> CommittedOffset:
    return CommittedOffset(group, "t", partition, offset, 3, "")


@dataclass
class FakeTail:
    """What the reconciler reads of a tail, as literals; ``ends`` answers end_offsets (or raises)."""

    caught_up: bool = True
    state: str = "running"
    interruptions: int = 0
    delivered: dict[int, int] = field(default_factory=lambda: {0: 10})
    ends: dict[int, int] | Exception = field(default_factory=lambda: {0: 10})
    asked: int = 0

    def live(self) -> bool:
        return self.caught_up and self.state == "running"

    async def end_offsets(self) -> Mapping[int, int]:
        self.asked += 1
        if isinstance(self.ends, Exception):
            raise self.ends
        return dict(self.ends)


class DuringPoll(FakeSeam):
    """A seam that lets the tail deliver events while an OffsetFetch is in flight."""

    during: list[Any]
    view: TailCommitted

    def fetch_offsets(self, coordinator_id: int, group_ids: Sequence[str]) -> dict[str, Any]:
        answer = super().fetch_offsets(coordinator_id, group_ids)
        if self.during:
            self.view.apply(self.during)
            self.during = []
        return answer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Sight:
    """What the other collectors last saw: the metadata the committed collector reads, the groups the groups
    collector failed on."""

    def __init__(self) -> None:
        self.meta = META
        self.failing: tuple[str, ...] = ()

    async def metadata(self) -> ClusterMetadata:
        return self.meta


SIGHT: dict[int, Sight] = {}


def rig(
    committed: dict[str, list[CommittedOffset]], every: float = 60.0, seam: FakeSeam | None = None
) -> tuple[CommittedCollector, Reconciler, FakeTail, FakeSeam, Clock]:
    seam = seam or FakeSeam()
    if seam.meta is None:  # Metadata by name answers (a topic whose offsets vanished is asked about)
        seam.meta = snapshot([1], {"t": [partition("t", 0, 1), partition("t", 1, 1)]})
    seam.listed = {1: [ListedGroup(g, "classic", "Stable", "consumer") for g in sorted(committed)]}
    seam.committed = committed
    clock = Clock()
    sight = SIGHT[id(seam)] = Sight()
    reconciler = Reconciler(
        TailCommitted(CLUSTER),
        every,
        clock=lambda: 100.0 + clock.now,
        monotonic=clock,
        failing_groups=lambda: sight.failing,
    )
    tail = FakeTail()
    reconciler.attach(tail)
    collector = CommittedCollector(seam, CLUSTER, sight.metadata, reconciler=reconciler)
    return collector, reconciler, tail, seam, clock


def fetches(seam: FakeSeam) -> int:
    return sum(1 for c in seam.calls if c[0] in ("fetch_offsets", "list_groups"))


async def test_reconcile_first_poll_seeds_nothing_counted_then_tail_served_without_request() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)], "b": [co("b", 1, 2)]})

    seeded = await collector.collect()  # seed: the tail resumed from a saved position, knows nothing
    assert seeded.offsets == (co("a", 0, 5), co("b", 1, 2)) and seeded.groups == ("a", "b")
    asked = fetches(seam)

    reconciler.view.apply([commit("a", "t", 0, 6)])
    clock.now = 5.0
    served = await collector.collect()

    assert fetches(seam) == asked  # no ListGroups, no OffsetFetch
    assert served.offsets == (co("a", 0, 6), co("b", 1, 2))
    assert (served.observed_at, served.groups, served.failures) == (105.0, ("a", "b"), ())
    assert (reconciler.runs, reconciler.differences, reconciler.served) == (0, 0, 1)


async def test_reconcile_poll_every_interval_compares_and_finds_nothing() -> None:
    collector, reconciler, tail, seam, clock = rig({"a": [co("a", 0, 5)]}, every=60.0)
    await collector.collect()
    for t in (5.0, 30.0, 59.0):
        clock.now = t
        await collector.collect()
    asked = fetches(seam)

    clock.now = 60.0
    await collector.collect()  # a minute since the seed: a reconciling poll
    assert fetches(seam) == asked + 2 and tail.asked == 1  # ListGroups + OffsetFetch, then the end offsets
    clock.now = 65.0
    await collector.collect()  # the tail is past those end offsets: counted

    assert (reconciler.runs, reconciler.differences) == (1, 0)
    assert reconciler.last is not None and (reconciler.last.at, reconciler.last.differences) == (165.0, 0)
    assert reconciler.as_dict()["last"] == {"at": 165.0, "differences": 0, "kinds": {}}


@pytest.mark.parametrize("gap", ["error", "not_running", "not_caught_up"])
async def test_reconcile_poll_at_once_after_any_tail_gap(gap: str) -> None:
    collector, reconciler, tail, seam, clock = rig({"a": [co("a", 0, 5)]})
    await collector.collect()
    clock.now = 5.0
    await collector.collect()
    asked = fetches(seam)

    if gap == "error":  # failed and recovered between two collects: only the counter tells
        tail.interruptions += 1
    elif gap == "not_running":
        tail.state = "backing_off"
    else:
        tail.caught_up = False
    clock.now = 10.0
    await collector.collect()
    assert fetches(seam) == asked + 2

    tail.state, tail.caught_up = "running", True
    clock.now = 15.0
    await collector.collect()
    # live again: a tail that was not at the last collect is polled once more, one that recovered
    # before it was judged by that poll already
    polls = 1 if gap == "error" else 2
    assert fetches(seam) == asked + 2 * polls
    clock.now = 20.0
    await collector.collect()
    assert fetches(seam) == asked + 2 * polls  # live through a whole interval after a poll: served
    assert reconciler.differences == 0


async def test_reconcile_missed_commit_tombstone_and_value_counted_and_corrected(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5), co("a", 1, 7)], "b": [co("b", 0, 1)]})
    await collector.collect()
    # what the tail then got wrong: a commit it never told (a/2 = 9), a tombstone it missed (b/0 is
    # gone) and a value that differs (a/0 = 4)
    seam.committed = {"a": [co("a", 0, 5), co("a", 1, 7), co("a", 2, 9)], "b": []}
    view = reconciler.view
    view.apply([commit("a", "t", 0, 4)])
    clock.now = 5.0
    await collector.collect()
    clock.now = 10.0
    assert (await collector.collect()).offsets == (co("a", 0, 4), co("a", 1, 7), co("b", 0, 1))

    clock.now = 60.0
    with caplog.at_level(logging.WARNING, logger="collectors.reconcile"):
        polled = await collector.collect()
        clock.now = 65.0
        served = await collector.collect()

    corrected = (co("a", 0, 5), co("a", 1, 7), co("a", 2, 9))
    assert polled.offsets == served.offsets == corrected and served.groups == ("a", "b")
    assert (reconciler.runs, reconciler.differences) == (1, 3)
    assert reconciler.last is not None
    assert dict(reconciler.last.kinds) == {"differs": 1, "missed_commit": 1, "missed_tombstone": 1}
    [line] = [r.getMessage() for r in caplog.records]
    assert "3 committed offset(s) the tail missed" in line and "b/t/0 missed_tombstone" in line


async def test_reconcile_key_changed_during_poll_not_counted() -> None:
    seam = DuringPoll()
    collector, reconciler, tail, _, clock = rig({"a": [co("a", 0, 5)]}, seam=seam)
    seam.view, seam.during = reconciler.view, []
    await collector.collect()
    clock.now = 5.0
    await collector.collect()

    # a commit lands while the reconciling poll is in flight: the poll sees 6, the tail tells it after
    # the poll read the view's point; the tail delivers it only after the poll ended
    seam.committed = {"a": [co("a", 0, 6), co("a", 1, 1)]}
    seam.during = [commit("a", "t", 1, 1)]
    tail.ends = {0: 12}
    clock.now = 60.0
    await collector.collect()
    clock.now = 65.0
    await collector.collect()
    assert reconciler.runs == 0  # the tail has not read up to the end offsets seen after the poll yet

    reconciler.view.apply([commit("a", "t", 0, 6)])
    tail.delivered = {0: 12}
    clock.now = 70.0
    served = await collector.collect()

    assert (reconciler.runs, reconciler.differences) == (1, 0)
    assert served.offsets == (co("a", 0, 6), co("a", 1, 1))


async def test_reconcile_hidden_topic_and_failed_group_skipped() -> None:
    seam = FakeSeam(
        meta=snapshot([1], {"t": [partition("t", 0, 1)]}),
        named_topic_errors={"secret": KafkaAuthError("denied", cluster=CLUSTER, topic="secret")},
    )
    hidden = CommittedOffset("a", "secret", 0, 3, None, "")
    collector, reconciler, _, _, clock = rig({"a": [co("a", 0, 5), hidden], "f": [co("f", 0, 1)]}, seam=seam)
    await collector.collect()
    clock.now = 5.0
    await collector.collect()

    # the ACL now hides "secret" and "f" cannot be fetched; the tail still holds what it told
    seam.committed = {"a": [co("a", 0, 5)], "f": [co("f", 0, 1)]}
    seam.group_errors = {"f": KafkaResponseError("x", error_code=15, error_name="COORDINATOR_NOT_AVAILABLE")}
    seam.coordinators = {"f": 1}
    clock.now = 60.0
    polled = await collector.collect()
    clock.now = 65.0
    await collector.collect()

    assert polled.unseen_topics() == {"secret"} and polled.groups == ("a",)  # the poll itself, handed on
    assert (reconciler.runs, reconciler.differences) == (1, 0)
    assert reconciler.view.get(("a", "secret", 0)) == hidden and reconciler.view.get(("f", "t", 0))


async def test_reconcile_view_with_acl_hidden_topic_served_with_its_failure() -> None:
    seam = FakeSeam(named_topic_errors={"secret": KafkaAuthError("denied", cluster=CLUSTER, topic="secret")})
    collector, reconciler, _, _, clock = rig({"a": [co("a", 0, 5)]}, seam=seam)
    collector._topics.add("secret")  # the store knows offsets on it: the poll asks, the ACL refuses
    reconciler.view.apply([commit("a", "secret", 0, 2)])
    first = await collector.collect()
    clock.now = 5.0
    served = await collector.collect()

    assert first.unseen_topics() == served.unseen_topics() == {"secret"}
    assert served.offsets == (co("a", 0, 5),) and reconciler.served == 1


async def test_reconcile_incomplete_poll_does_not_seed_and_polls_again() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)]})
    seam.down = {1}
    await collector.collect()
    seam.down = set()
    clock.now = 5.0
    await collector.collect()
    asked = fetches(seam)
    clock.now = 10.0
    await collector.collect()

    assert fetches(seam) == asked and reconciler.runs == 0  # seeded by the second, complete poll


async def test_reconcile_end_offsets_unavailable_asked_again_next_collect() -> None:
    collector, reconciler, tail, _, clock = rig({"a": [co("a", 0, 5)]})
    await collector.collect()
    tail.ends = KafkaUnavailableError("no leader", cluster=CLUSTER)
    clock.now = 60.0
    await collector.collect()
    clock.now = 65.0
    await collector.collect()
    assert reconciler.runs == 0

    tail.ends = {0: 10}
    clock.now = 70.0
    await collector.collect()
    assert (reconciler.runs, tail.asked) == (1, 3)


async def test_reconcile_new_tail_unseeded_until_a_poll() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)]})
    await collector.collect()
    clock.now = 5.0
    await collector.collect()
    asked = fetches(seam)

    reconciler.attach(FakeTail())  # an ha promotion: a fresh tail from the stored positions
    clock.now = 10.0
    await collector.collect()
    clock.now = 15.0
    await collector.collect()

    assert fetches(seam) == asked + 2 and reconciler.runs == 0  # seeded anew, then served


async def test_reconcile_no_tail_attached_polls_every_time() -> None:
    seam = FakeSeam(
        listed={1: [ListedGroup("a", "classic", "Stable", "consumer")]}, committed={"a": [co("a", 0, 5)]}
    )
    reconciler = Reconciler(TailCommitted(CLUSTER), 60.0)
    collector = CommittedCollector(seam, CLUSTER, source(META), reconciler=reconciler)

    for _ in range(3):
        assert (await collector.collect()).offsets == (co("a", 0, 5),)

    assert fetches(seam) == 6 and reconciler.view.size == 0


async def test_reconcile_tombstone_from_tail_removes_offset_served() -> None:
    collector, reconciler, _, _, clock = rig({"a": [co("a", 0, 5), co("a", 1, 1)]})
    await collector.collect()
    reconciler.view.apply([tombstone("a", "t", 1)])
    clock.now = 5.0

    assert (await collector.collect()).offsets == (co("a", 0, 5),)


async def test_reconcile_group_deleted_unseen_by_tail_asked_by_name_and_counted() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)], "b": [co("b", 0, 1)]})
    await collector.collect()
    # b was deleted and the tail never told: no coordinator lists it, asked by name it has no offsets
    seam.listed = {1: [ListedGroup("a", "classic", "Stable", "consumer")]}
    seam.committed = {"a": [co("a", 0, 5)]}
    seam.coordinators = {"b": 1}
    clock.now = 60.0
    polled = await collector.collect()
    clock.now = 65.0
    served = await collector.collect()

    assert ("fetch_offsets", 1, ("b",)) in seam.calls
    assert polled.offsets == served.offsets == (co("a", 0, 5),)
    assert (reconciler.runs, reconciler.differences) == (1, 1)
    assert reconciler.last is not None and dict(reconciler.last.kinds) == {"missed_tombstone": 1}


async def test_reconcile_unlisted_group_failing_by_name_skipped() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)], "b": [co("b", 0, 1)]})
    await collector.collect()
    seam.listed = {1: [ListedGroup("a", "classic", "Stable", "consumer")]}  # its coordinator is loading
    seam.coordinators = {"b": 1}
    seam.group_errors = {
        "b": KafkaResponseError("x", error_code=14, error_name="COORDINATOR_LOAD_IN_PROGRESS")
    }
    clock.now = 60.0
    await collector.collect()
    clock.now = 65.0
    served = await collector.collect()

    assert served.offsets == (co("a", 0, 5), co("b", 0, 1))
    assert (reconciler.runs, reconciler.differences) == (1, 0)


async def test_reconcile_topic_hidden_by_acl_polled_at_once_and_not_taken_for_deleted() -> None:
    seam = FakeSeam(meta=snapshot([1], {"t": [partition("t", 0, 1)], "new": [partition("new", 0, 1)]}))
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)]}, seam=seam)
    sight = SIGHT[id(seam)]
    sight.meta = metadata([1], {"t": [partition("t", 0, 1)], "new": [partition("new", 0, 1)]})
    await collector.collect()
    # told by the tail only: no poll ever saw an offset on "new"
    reconciler.view.apply([commit("a", "new", 0, 3)])
    clock.now = 5.0
    assert len((await collector.collect()).offsets) == 2 and reconciler.served == 1

    # DESCRIBE on "new" taken away: Metadata and OffsetFetch leave it out, asked by name it is refused
    seam.named_topic_errors = {"new": KafkaAuthError("denied", cluster=CLUSTER, topic="new")}
    sight.meta = META
    clock.now = 10.0
    hidden = await collector.collect()
    clock.now = 15.0
    served = await collector.collect()

    assert fetches(seam) == 4  # the seed and this poll, at once
    assert hidden.unseen_topics() == served.unseen_topics() == {"new"}
    assert served.offsets == (co("a", 0, 5),) and reconciler.served == 2  # left out, never deleted
    assert reconciler.view.get(("a", "new", 0)) is not None
    assert (reconciler.runs, reconciler.differences) == (1, 0)

    # granted again: back in the metadata, polled at once, seen again
    seam.named_topic_errors = {}
    seam.committed = {"a": [co("a", 0, 5), CommittedOffset("a", "new", 0, 3, 3, "")]}
    sight.meta = metadata([1], {"t": [partition("t", 0, 1)], "new": [partition("new", 0, 1)]})
    clock.now = 20.0
    seen = await collector.collect()
    assert fetches(seam) == 6 and seen.failures == () and len(seen.offsets) == 2
    clock.now = 25.0
    await collector.collect()
    assert (reconciler.runs, reconciler.differences) == (2, 0)


async def test_reconcile_groups_collector_failing_polls_every_collect() -> None:
    collector, reconciler, _, seam, clock = rig({"a": [co("a", 0, 5)]})
    await collector.collect()
    SIGHT[id(seam)].failing = ("group:a",)
    for t in (5.0, 10.0):
        clock.now = t
        await collector.collect()
    assert fetches(seam) == 6 and reconciler.served == 0

    SIGHT[id(seam)].failing = ()
    clock.now = 15.0
    await collector.collect()
    assert fetches(seam) == 6 and reconciler.served == 1


class TailChangesDuringPoll(FakeSeam):
    """A seam that does something to the tail while an OffsetFetch is in flight."""

    change: Any = None

    def fetch_offsets(self, coordinator_id: int, group_ids: Sequence[str]) -> dict[str, Any]:
        if self.change is not None:
            self.change()
        return super().fetch_offsets(coordinator_id, group_ids)


@pytest.mark.parametrize(
    ("before", "during", "under"),
    [
        ("live", None, True),
        ("live", "stops", False),
        ("live", "fails", False),
        ("not_caught_up", None, False),
    ],
)
async def test_reconcile_poll_handed_on_says_whether_the_live_tail_had_every_commit_throughout(
    before: str, during: str | None, under: bool
) -> None:
    """A poll handed on as it is (here: a group failed, so the view cannot stand in for it) is marked
    ``under_tail`` only when the tail was live from before it was sent until it was answered, with no
    failure between: then detection lets it only seed (tests/alerts/test_commits.py)."""
    seam = TailChangesDuringPoll()
    collector, reconciler, tail, _, clock = rig({"a": [co("a", 0, 5)], "f": [co("f", 0, 1)]}, seam=seam)
    first = await collector.collect()
    assert first.from_tail and first.under_tail  # the seed completes the view: its observation
    clock.now = 5.0
    served = await collector.collect()
    assert served.from_tail and served.under_tail and reconciler.served == 1

    seam.group_errors = {"f": KafkaResponseError("x", error_code=15, error_name="COORDINATOR_NOT_AVAILABLE")}
    seam.coordinators = {"f": 1}
    tail.caught_up = before == "live"

    def change() -> None:
        if during == "stops":
            tail.state = "stopped"
        elif during == "fails":
            tail.interruptions += 1

    seam.change = change
    clock.now = 60.0
    polled = await collector.collect()

    assert not polled.from_tail and polled.groups == ("a",)  # the poll itself
    assert polled.under_tail is under
