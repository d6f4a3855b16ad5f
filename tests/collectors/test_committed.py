"""CommittedCollector over a fake seam: batching per coordinator and the per-group fallback."""

from __future__ import annotations

import logging
from typing import Any

from collectors.committed import CommittedCollector
from collectors.errors import KafkaAuthError, KafkaResponseError, KafkaUnavailableError
from collectors.model import CommittedOffset, Failure
from collectors.seam import ListedGroup
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, partition, snapshot, source

META = metadata([1, 2], {})
LISTED = {
    1: [ListedGroup(g, "classic", "Empty", "consumer") for g in ("a", "b", "c")],
    2: [ListedGroup("d", "consumer", "Stable", "consumer"), ListedGroup("s", "share", "Empty", "share")],
}
COMMITTED = {
    "a": [CommittedOffset("a", "orders", 0, 10, 3, "m"), CommittedOffset("a", "orders", 1, 7, None)],
    "b": [CommittedOffset("b", "orders", 0, 4, 3)],
    "c": [],
    "d": [CommittedOffset("d", "audit", 0, 99, 1)],
}


def _loading(group: str) -> KafkaResponseError:
    return KafkaResponseError(
        "broker answered COORDINATOR_LOAD_IN_PROGRESS",
        error_code=14,
        error_name="COORDINATOR_LOAD_IN_PROGRESS",
        cluster=CLUSTER,
        group=group,
    )


def _fetches(seam: FakeSeam) -> list[tuple[Any, ...]]:
    return sorted(c for c in seam.calls if c[0] == "fetch_offsets")


async def test_committed_all_groups_one_fetch_per_coordinator() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED)

    observed = await CommittedCollector(seam, CLUSTER, source(META), clock=lambda: 5.0).collect()

    assert observed.observed_at == 5.0
    assert observed.groups == ("a", "b", "c", "d")
    assert set(observed.offsets) == {o for g in COMMITTED.values() for o in g}
    assert len(observed.offsets) == 4
    assert observed.failures == ()
    assert _fetches(seam) == [("fetch_offsets", 1, ("a", "b", "c")), ("fetch_offsets", 2, ("d",))]


async def test_committed_group_erroring_in_batch_fetched_alone_via_fallback() -> None:
    seam = FakeSeam(
        listed=LISTED, committed=COMMITTED, batch_errors={"b": _loading("b")}, coordinators={"b": 2}
    )

    observed = await CommittedCollector(seam, CLUSTER, source(META)).collect()

    assert observed.groups == ("a", "b", "c", "d")
    assert CommittedOffset("b", "orders", 0, 4, 3) in observed.offsets
    assert observed.failures == ()
    assert ("find_coordinators", ("b",)) in seam.calls
    assert ("fetch_offsets", 2, ("b",)) in seam.calls


async def test_committed_group_failing_in_fallback_recorded_as_group_failure() -> None:
    seam = FakeSeam(
        listed=LISTED, committed=COMMITTED, group_errors={"b": _loading("b")}, coordinators={"b": 1}
    )

    observed = await CommittedCollector(seam, CLUSTER, source(META)).collect()

    assert observed.groups == ("a", "c", "d")
    assert all(o.group != "b" for o in observed.offsets)
    assert [(f.scope, f.key, f.error) for f in observed.failures] == [("group", "b", "KafkaResponseError")]


async def test_committed_coordinator_lookup_error_recorded_for_that_group() -> None:
    err = KafkaUnavailableError("no coordinator", cluster=CLUSTER, group="b")
    seam = FakeSeam(
        listed=LISTED, committed=COMMITTED, batch_errors={"b": _loading("b")}, coordinators={"b": err}
    )

    observed = await CommittedCollector(seam, CLUSTER, source(META)).collect()

    assert observed.groups == ("a", "c", "d")
    assert [(f.key, f.error) for f in observed.failures] == [("b", "KafkaUnavailableError")]


async def test_committed_coordinator_down_groups_listed_elsewhere_still_fetched() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, down={2})

    observed = await CommittedCollector(seam, CLUSTER, source(META)).collect()

    assert observed.groups == ("a", "b", "c")
    assert [(f.scope, f.key) for f in observed.failures] == [("broker", "2")]


async def test_committed_share_groups_not_fetched() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED)

    await CommittedCollector(seam, CLUSTER, source(META)).collect()

    assert all("s" not in c[2] for c in _fetches(seam))


# ---------------------------------------------------------------- a topic an ACL hides (issue 14)


def _without_audit() -> dict[str, list[CommittedOffset]]:
    """OffsetFetch after DESCRIBE on ``audit`` was taken away: its offsets left out, without an error."""
    return {**COMMITTED, "d": []}


def _auth(topic: str) -> KafkaAuthError:
    return KafkaAuthError("broker answered TOPIC_AUTHORIZATION_FAILED", cluster=CLUSTER, topic=topic)


async def test_committed_topic_hidden_by_an_acl_is_a_topic_failure_not_a_deletion(caplog: Any) -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, meta=snapshot([1, 2], {}))
    collector = CommittedCollector(seam, CLUSTER, source(META))
    assert (await collector.collect()).failures == ()
    assert not [c for c in seam.calls if c[0] == "topic_errors"]  # nothing unseen: nothing asked

    seam.committed = _without_audit()
    seam.named_topic_errors = {"audit": _auth("audit")}
    with caplog.at_level(logging.WARNING, logger="collectors.committed"):
        first = await collector.collect()
        second = await collector.collect()

    for observed in (first, second):
        [f] = observed.failures
        assert (f.scope, f.key, f.error) == ("topic", "audit", "KafkaAuthError")
        assert "committed offsets not seen" in f.message
        assert "d" in observed.groups  # the group was fetched: only the topic is unseen
    assert [c for c in seam.calls if c[0] == "topic_errors"] == [("topic_errors", ("audit",))] * 2
    assert len([r for r in caplog.records if "not authorized to describe topics audit" in r.message]) == 1


async def test_committed_topic_gone_is_forgotten_and_not_asked_again() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, meta=snapshot([1, 2], {}))
    collector = CommittedCollector(seam, CLUSTER, source(META))
    await collector.collect()
    seam.committed = _without_audit()  # the topic was deleted: Metadata by name answers UNKNOWN_TOPIC

    assert (await collector.collect()).failures == ()
    assert (await collector.collect()).failures == ()
    assert [c for c in seam.calls if c[0] == "topic_errors"] == [("topic_errors", ("audit",))]


async def test_committed_offsets_deleted_on_a_described_topic_asked_once_not_a_failure() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, meta=snapshot([1, 2], {"audit": []}))
    meta = metadata([1, 2], {"audit": [partition("audit", 0, 1)]})
    collector = CommittedCollector(seam, CLUSTER, source(meta))
    await collector.collect()
    seam.committed = _without_audit()  # OffsetDelete: the topic is described, its offsets really went

    assert (await collector.collect()).failures == ()
    assert (await collector.collect()).failures == ()
    assert [c for c in seam.calls if c[0] == "topic_errors"] == [("topic_errors", ("audit",))]


async def test_committed_known_topics_from_the_store_are_checked_from_the_first_poll() -> None:
    seam = FakeSeam(listed=LISTED, committed=_without_audit(), meta=snapshot([1, 2], {}))
    seam.named_topic_errors = {"audit": _auth("audit")}

    observed = await CommittedCollector(seam, CLUSTER, source(META), known_topics=["audit"]).collect()

    assert [(f.scope, f.key) for f in observed.failures] == [("topic", "audit")]


async def test_committed_topic_that_cannot_be_asked_about_is_unseen_not_deleted() -> None:
    seam = FakeSeam(listed=LISTED, committed=_without_audit(), meta=None)  # Metadata by name: no answer

    observed = await CommittedCollector(seam, CLUSTER, source(META), known_topics=["audit"]).collect()

    assert [(f.scope, f.key, f.error) for f in observed.failures] == [
        ("topic", "audit", "KafkaUnavailableError")
    ]


def test_failure_reason_of_an_auth_error_is_not_authorized_else_the_error_type() -> None:
    hidden = Failure("topic", "audit", KafkaAuthError.__name__, "TOPIC_AUTHORIZATION_FAILED")
    assert (hidden.reason, hidden.entry) == ("not authorized", "topic:audit: not authorized")
    down = Failure("group", "g", KafkaUnavailableError.__name__, "down")
    assert down.entry == "group:g: KafkaUnavailableError"


async def test_committed_offsets_vanishing_on_a_listed_topic_are_checked_by_name() -> None:
    """The ACL taken away after the metadata was read: the metadata still lists the topic, OffsetFetch
    already leaves it out. Asked by name it is hidden; it stays checked while it is."""
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, meta=snapshot([1, 2], {}))
    meta = metadata([1, 2], {"audit": [partition("audit", 0, 1)]})
    collector = CommittedCollector(seam, CLUSTER, source(meta))
    await collector.collect()
    seam.committed = _without_audit()
    seam.named_topic_errors = {"audit": _auth("audit")}

    for _ in range(2):
        observed = await collector.collect()
        assert [(f.scope, f.key, f.reason) for f in observed.failures] == [
            ("topic", "audit", "not authorized")
        ]
    seam.named_topic_errors = {}  # granted again, but the group's offsets on it were deleted meanwhile
    seam.meta = snapshot([1, 2], {"audit": [partition("audit", 0, 1)]})
    assert (await collector.collect()).failures == ()
    assert (await collector.collect()).failures == ()
    assert len([c for c in seam.calls if c[0] == "topic_errors"]) == 3


async def test_committed_a_group_no_longer_listed_is_forgotten_not_checked_when_recreated() -> None:
    seam = FakeSeam(listed=LISTED, committed=COMMITTED, meta=snapshot([1, 2], {}))
    meta = metadata([1, 2], {"audit": [partition("audit", 0, 1)]})
    collector = CommittedCollector(seam, CLUSTER, source(meta))
    await collector.collect()
    seam.listed = {1: LISTED[1], 2: []}  # "d" deleted: a complete run no longer lists it
    await collector.collect()
    seam.listed = LISTED  # a new "d", committed on nothing yet
    seam.committed = _without_audit()

    assert (await collector.collect()).failures == ()
    assert not [c for c in seam.calls if c[0] == "topic_errors"]


async def test_committed_groups_topics_and_pairs_out_of_scope_dropped_at_the_source() -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    committed = {
        **COMMITTED,
        "b": [CommittedOffset("b", "orders", 0, 4, 3), CommittedOffset("b", "__internal", 0, 1, None)],
    }
    seam = FakeSeam(listed=LISTED, committed=committed)
    scope = Scope.from_patterns(NameFilter(exclude=["c"]), NameFilter(exclude=["__.*"]), [("a", "orders")])

    collector = CommittedCollector(seam, CLUSTER, source(META), known_topics=["__internal"], scope=scope)
    observed = await collector.collect()

    assert observed.groups == ("a", "b", "d")
    assert {(o.group, o.topic) for o in observed.offsets} == {("b", "orders"), ("d", "audit")}
    assert _fetches(seam) == [("fetch_offsets", 1, ("a", "b")), ("fetch_offsets", 2, ("d",))]
    assert not [c for c in seam.calls if c[0] == "topic_errors"]  # an excluded topic is never asked after
    assert observed.failures == ()
