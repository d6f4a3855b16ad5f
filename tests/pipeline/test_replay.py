"""The pipeline's anomalies over a replayed history equal the online detectors' findings.

The scenario (:mod:`.scenario`) holds a rewind, a rewind undone by a stale member's recommit, a skip
from below the log start, a tombstone of a live group, committed offsets below the log start and beyond
the log end, plus look-alikes that must not count (an idle group's tombstone, DeleteGroups of an Empty
classic group and of a KIP-848 group, redelivered events). Both sides see the same tail events; the
pipeline reads them back from an archive written by the real ArchiveSink.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.testing import assertDataFrameEqual

from pipeline.analysis import find_anomalies, offset_records, rewind_and_loss_rows
from pipeline.sources import read_archive
from tests.pipeline.history import pipeline_anomalies, write_archive
from tests.pipeline.online import comparable, online_findings
from tests.pipeline.scenario import EXPECTED

DDL = "kind string, group string, topic string, partition int, magnitude bigint"


@pytest.fixture(scope="module")
def anomalies(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    archive = tmp_path_factory.mktemp("replay") / "archive"
    write_archive(archive)
    return pipeline_anomalies(spark, archive).cache()


def test_anomalies_replayed_history_equal_online_detectors(spark: Any, anomalies: Any) -> None:
    online = comparable(online_findings())
    assert online == EXPECTED  # the scenario still exercises what it claims to

    got = anomalies.select("kind", "group", "topic", "partition", "magnitude")
    assertDataFrameEqual(got, spark.createDataFrame(sorted(online), DDL))


def test_anomalies_replayed_history_causes_match_online(anomalies: Any) -> None:
    online = {(f.kind, f.group): f.cause for f in online_findings() if f.topic is not None}

    rows = anomalies.collect()

    got = {(r.kind, r.group): r.cause for r in rows}
    assert got[("offset_rewind", "g7")] == online[("offset_rewind", "g7")] == "rebalance_recommit"
    assert got[("offset_rewind", "g1")] == online[("offset_rewind", "g1")] == "unknown"
    # landed on the log end: a reset to latest, or one to earliest read to the end; which is unknown
    assert got[("offset_skip", "g4")] == online[("offset_skip", "g4")] == "auto_reset_direction_unknown"
    assert got[("offset_skip", "g8")] == online[("offset_skip", "g8")] == "auto_reset_direction_unknown"
    assert ("offset_rewind", "g8") not in got
    assert got[("offset_skip", "g9")] == online[("offset_skip", "g9")] == "auto_reset_earliest"
    assert got[("offset_skip", "g12")] == online[("offset_skip", "g12")] == "admin_reset"
    assert got[("offset_skip", "g14")] == online[("offset_skip", "g14")] == "member_left_or_admin_reset"
    assert got[("offset_rewind", "g13")] == online[("offset_rewind", "g13")] == "auto_reset_earliest"
    assert got[("offsets_lost", "g2")] == online[("offsets_lost", "g2")] == "deleted_while_consuming"


def test_narrow_rows_without_ranges_find_what_the_full_window_finds(
    spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    archive = tmp_path_factory.mktemp("narrow") / "archive"
    write_archive(archive)
    history = read_archive(spark, archive)
    groups = history.where("kind not in ('commit', 'offset_tombstone')")

    full = find_anomalies(groups, offset_records(history))
    narrow = find_anomalies(groups, rewind_and_loss_rows(history))

    # g1, g7, g8 and g13 moving back, g2 tombstoned while consuming: once each
    assert narrow.count() == 5
    assertDataFrameEqual(narrow, full)


def test_anomalies_replayed_history_bounds_match_online(anomalies: Any) -> None:
    # the upper bounds of a reset whose direction the commits cannot tell, on both sides (null: none)
    bounds = ("messages_skipped_max", "messages_replayed_max", "messages_read_past_max")
    moves = ("offset_skip", "offset_rewind")
    online = {
        (f.kind, f.group): tuple(f.magnitude.get(b) for b in bounds)
        for f in online_findings()
        if f.kind in moves
    }

    got = {(r.kind, r.group): tuple(r[b] for b in bounds) for r in anomalies.collect() if r.kind in moves}

    assert got == online
    assert got[("offset_skip", "g4")] == (90, None, 60)  # 10 -> 100, 30 deleted unread
    assert got[("offset_skip", "g8")] == (10, 100, None)  # truncated to 100, reset to 110
    assert got[("offset_skip", "g12")] == (None, None, None)  # an operator's reset: exact
    assert got[("offset_skip", "g14")] == (300, None, None)  # or the departing member's commit: at most
