"""CommittedCollector over a fake seam: batching per coordinator and the per-group fallback."""

from __future__ import annotations

from typing import Any

from collectors.committed import CommittedCollector
from collectors.errors import KafkaResponseError, KafkaUnavailableError
from collectors.model import CommittedOffset
from collectors.seam import ListedGroup
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, source

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
