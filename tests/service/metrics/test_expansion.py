"""The render worker's stand-ins answer what the model objects answer."""

from __future__ import annotations

from service.metrics.expansion import expand
from service.metrics.snapshot import compact
from service.metrics.sources import ScrapeInputs
from service.metrics.view import lag_rows
from tests.service.metrics import builders as b


def test_compact_committed_keyed_offsets_and_offsets_as_the_observation() -> None:
    observed = b.committed()
    inputs, now = expand(compact(ScrapeInputs(clusters=[b.cluster_inputs()]), b.NOW))
    [cluster] = inputs.clusters
    stand_in = cluster.committed
    assert stand_in is not None and now == b.NOW
    assert (
        list(stand_in.keyed_offsets())
        == list(observed.keyed_offsets())
        == [
            (("billing", "orders", 0), 90),
            (("billing", "orders", 1), 55),
            (("audit", "orders", 0), 100),
            (("audit", "gone", 0), 5),
        ]
    )
    assert (stand_in.cluster, stand_in.observed_at, stand_in.groups) == ("c1", b.NOW - 1, observed.groups)
    assert stand_in.offsets == observed.offsets  # built on demand, equal to the model's
    assert stand_in.offsets is stand_in.offsets  # and once
    assert sorted(lag_rows(stand_in, cluster.offsets)) == sorted(lag_rows(observed, b.offsets()))


def test_compact_detection_evaluations_survive_the_worker_round_trip() -> None:
    inputs, _ = expand(compact(ScrapeInputs(evaluations=[("c1", 12)]), b.NOW))
    assert list(inputs.evaluations) == [("c1", 12)]


def test_compact_reconcile_figures_survive_the_worker_round_trip() -> None:
    inputs, _ = expand(compact(ScrapeInputs(reconciles=[("c1", 4, 1)]), b.NOW))
    assert list(inputs.reconciles) == [("c1", 4, 1)]
