import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from alerts.engine import evaluate
from alerts.model import CONFIG_RISK, LAG_HIGH
from alerts.state import CommitKey, CommitPoint, DetectionState, OffsetSample, PartitionKey, Recreation
from collectors.model import Failure
from service.detection import state_codec
from service.detection.inputs import (
    ALWAYS_COVERED,
    COVERAGE,
    EPOCH_KINDS,
    CollectorHealth,
    FreshObservations,
    unranged,
    with_epochs,
)
from service.scheduler import CollectorStatus as JobStatus
from service.state import LatestObservations
from tests.alerts.builders import TH, commit, committed, groups, inputs, metadata, metrics, offsets
from tests.service.detection.builders import C, T, before_format_5, carried


async def test_unranged_the_partitions_the_fresh_offsets_observation_failed() -> None:
    latest = LatestObservations()
    fresh = FreshObservations(C, latest)
    assert unranged(fresh.peek()) == frozenset()
    failures = (
        Failure("partition", f"{T}/3", "NoLeader", "partition has no leader"),
        Failure("broker", "2", "KafkaConnectionError", "down"),
        Failure("partition", "a/b/12", "KafkaConnectionError", "down"),
    )
    await latest.put(replace(offsets(2.0, {(T, 0): (0, 10)}), failures=failures))
    assert unranged(fresh.peek()) == {(T, 3), ("a/b", 12)}


async def test_fresh_observations_each_handed_once_metadata_joins_offsets() -> None:
    latest = LatestObservations()
    fresh = FreshObservations(C, latest)
    await latest.put(metadata(1.0, {(T, 0): (1, 3, (1,))}))
    await latest.put(offsets(2.0, {(T, 0): (0, 10)}))
    first = fresh.peek()
    assert set(first.observations) == {"metadata", "offsets"}
    assert LAG_HIGH in first.covered() and CONFIG_RISK not in first.covered()
    fresh.taken(first)
    assert fresh.peek().observations == {}
    await latest.put(offsets(3.0, {(T, 0): (0, 12)}))
    assert set(fresh.peek().observations) == {"metadata", "offsets"}


def test_fresh_observations_not_taken_offered_again() -> None:
    latest = LatestObservations()
    latest._latest[(C, type(offsets(1.0, {})))] = offsets(1.0, {})
    fresh = FreshObservations(C, latest)
    fresh.peek()
    assert set(fresh.peek().observations) == {"offsets"}


@pytest.mark.parametrize(
    ("marks", "complete", "epochs"),
    [
        (("offsets",), True, True),
        (("offsets",), False, False),  # an epoch end not known: a divergence not found may stand
        (("committed", "configs"), True, False),  # no log range this evaluation
    ],
)
def test_with_epochs_only_with_offsets_and_every_end_known(
    marks: tuple[str, ...], complete: bool, epochs: bool
) -> None:
    covered = ALWAYS_COVERED.union(*(COVERAGE.get(m, frozenset()) for m in marks))
    assert (with_epochs(covered, complete) >= EPOCH_KINDS) is epochs


def test_collector_health_single_failure_ok_stale_failure_down() -> None:
    s = JobStatus(
        "offsets",
        C,
        interval=5.0,
        last_success_at=100.0,
        last_failure_at=104.0,
        last_error="KafkaUnavailableError: down",
    )
    health = CollectorHealth(lambda: [s], stale_after_intervals=3)
    [ok] = health(106.0)
    [down] = health(120.0)
    assert ok.ok is True
    assert (down.ok, down.failing_since, down.error, down.message) == (
        False,
        104.0,
        "KafkaUnavailableError",
        "down",
    )


def _saved_state() -> DetectionState:
    s = DetectionState()
    s = evaluate(
        s,
        inputs(
            metadata=metadata(1, {(T, 0): (1, 3, (1, 2))}),
            offsets=offsets(1, {(T, 0): (0, 100)}),
            committed=committed(1, {("g", T, 0): 50}),
            groups=groups(1, {"g": "Stable"}, assigned={"g": ((T, 0),)}),
            metrics=metrics(
                1, {1: {"kafka_controller_controllerstats_uncleanleaderelections_total": 1.0}}, {"a": "b"}
            ),
        ),
        1,
        TH,
    )[1]
    s = evaluate(s, inputs(commit_events=(commit(500, 2, 1), commit(300, 3, 2)), tail_live=True), 3, TH)[1]
    s = evaluate(s, inputs(commit_events=(commit(None, 4, 3),), tail_live=True), 4, TH)[1]
    assert s.pending_losses and s.pending_losses[0].members_topics == (T,)
    assert s.pending_rewinds and s.counters and s.partitions[next(iter(s.partitions))].isr == (1, 2)
    assert s.unclean_counter_seen_at == 1
    assert s.groups["g"].topics == (T,)
    blind = replace(TH, blind_gap_seconds=30.0)
    s = evaluate(s, inputs(offsets=offsets(100, {(T, 0): (0, 100)})), 100, blind)[1]
    assert s.blind_spans == ((1, 100),) and s.offsets_seen_at == 100 and s.tombstoned
    return s


def test_state_codec_round_trip_equal() -> None:
    s = _saved_state()
    assert s.ranges
    assert state_codec.loads(state_codec.dumps(s)) == s
    assert state_codec.loads(state_codec.dumps(DetectionState())) == DetectionState()


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_state_codec_body_same_whatever_the_chunk_size(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """Large sections are encoded a chunk of rows at a time: the body is one JSON document whatever the
    chunk boundaries (a chunk of one row, sections shorter and longer than a chunk)."""
    s = _with_commits(_saved_state())
    whole = state_codec.dumps(s)
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", rows)
    assert state_codec.dumps(s) == whole
    assert [c[:3] for c in json.loads(whole)["commits"]][-2:] == [["h", T, 1], ["h", T, 2]]
    assert state_codec.loads(whole) == s


@pytest.mark.parametrize("rows", [1, 2, 5_000])
def test_state_codec_parts_round_trip_equal_and_hold_the_format_3_rows(
    monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    """Format 4: the small members as the body, each chunk of a large section's rows a part of its own."""
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", rows)
    s = _with_commits(_saved_state())
    body, parts = state_codec.encode(s)
    parts = list(parts)
    assert state_codec.load(body, 4, iter(parts)) == s
    whole = json.loads(state_codec.dumps(s))
    for section in ("partitions", "ranges", "commits", "commit_history"):
        chunks = [json.loads(rows_) for name, rows_ in parts if name == section]
        assert all(0 < len(c) <= rows for c in chunks)
        assert [row for c in chunks for row in c] == whole.pop(section)
    assert json.loads(body) == whole
    empty, none = state_codec.encode(DetectionState())
    assert list(none) == [] and state_codec.load(empty, 4, ()) == DetectionState()


def test_state_codec_load_reads_a_format_3_body_and_refuses_malformed_parts() -> None:
    s = _with_commits(_saved_state())
    assert state_codec.load(state_codec.dumps(s), 3) == s
    body, parts = state_codec.encode(s)
    parts = list(parts)
    bad: list[list[tuple[str, str]]] = [
        [("nonsense", "[]")],  # a section this release does not have
        [parts[0], ("ranges", "[]"), parts[0]],  # a section in two places
        [(parts[0][0], "{}")],  # not an array
        [(parts[0][0], "[[1]]")],  # a row too short
    ]
    for wrong in bad:
        with pytest.raises((ValueError, KeyError, TypeError)):
            state_codec.load(body, 4, wrong)
    with pytest.raises(ValueError):
        state_codec.load("[]", 4, parts)


def _with_commits(s: DetectionState) -> DetectionState:
    point = CommitPoint(7, 2, 5.0, 5.0, "tail", "Stable", 3, 4, 9.5)  # every field set
    return replace(s, commits={**s.commits, CommitKey("h", T, 1): point, CommitKey("h", T, 2): point})


def _objects(body: dict[str, Any]) -> dict[str, Any]:
    """A whole body's commits and partitions written as objects, as formats 1 and 2 wrote them."""
    body = before_format_5(body)
    commit_names, partition_names = body.pop("commit_fields"), body.pop("partition_fields")
    body["commits"] = [[g, t, p, dict(zip(commit_names, v, strict=True))] for g, t, p, *v in body["commits"]]
    body["partitions"] = [
        [t, p, dict(zip(partition_names, v, strict=True))] for t, p, *v in body["partitions"]
    ]
    return body


def test_state_codec_reads_format_2_body_equal() -> None:
    """A state saved by the release before (one object per committed offset and partition) is read."""
    s = carried(_with_commits(_saved_state()))
    body = _objects(json.loads(state_codec.dumps(s)))
    assert 2 in state_codec.READS
    assert state_codec.loads(json.dumps(body), 2) == s


def test_state_codec_reads_fields_by_the_names_saved() -> None:
    s = _with_commits(_saved_state())
    body = json.loads(state_codec.dumps(s))
    body["commit_fields"].reverse()
    body["commits"] = [[g, t, p, *reversed(v)] for g, t, p, *v in body["commits"]]
    assert state_codec.loads(json.dumps(body)) == s
    for fields in (body["commit_fields"], list(reversed(body["commit_fields"]))):  # either way read
        short = {**body, "commit_fields": fields, "commits": [c[:-1] for c in body["commits"]]}
        with pytest.raises(ValueError):  # a point short of a field: refused, not misread
            state_codec.loads(json.dumps(short))


def test_state_codec_reads_format_1_body_equal() -> None:
    """A state saved two releases before (one JSON array per sample) is still read."""
    history = {CommitKey("g", T, 0): (OffsetSample(1.0, 5), OffsetSample(70.5, 9))}
    s = carried(replace(_saved_state(), commit_history=history))
    body = _objects(json.loads(state_codec.dumps(s)))
    ranges, commits = s.ranges, s.commit_history
    body["ranges"] = [[t, p, [list(x) for x in ranges[PartitionKey(t, p)]]] for t, p, *_ in body["ranges"]]
    body["commit_history"] = [
        [g, t, p, [list(x) for x in commits[CommitKey(g, t, p)]]] for g, t, p, *_ in body["commit_history"]
    ]
    assert 1 in state_codec.READS
    assert state_codec.loads(json.dumps(body), 1) == s


@pytest.mark.parametrize("broken", [["not base64!"], []])
def test_state_codec_malformed_history_raises_value_error(broken: list[str]) -> None:
    body = json.loads(state_codec.dumps(_saved_state()))
    body["ranges"][0][2:] = [body["ranges"][0][2], *broken]  # the times, then a broken or missing array
    with pytest.raises(ValueError):
        state_codec.loads(json.dumps(body))


def test_state_codec_reads_a_body_a_row_at_a_time_in_any_member_order() -> None:
    """The rows of a format-3 body go into the state as they are read; whitespace, empty sections and
    field names saved after the sections that need them are read the same."""
    s = _with_commits(_saved_state())
    body = json.loads(state_codec.dumps(s))
    spaced = json.dumps(body, indent=2)
    assert "\n" in spaced and state_codec.loads(spaced) == s
    names_last = {k: body[k] for k in sorted(body, key=lambda k: k.endswith("_fields"))}
    assert list(names_last)[-1].endswith("_fields")
    assert state_codec.loads(json.dumps(names_last)) == s
    empty = state_codec.dumps(DetectionState())
    assert '"commits":[]' in empty and state_codec.loads(empty) == DetectionState()


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t + "x",  # text after the object
        lambda t: t[:-1],  # no closing brace
        lambda t: t.replace('"commits":[', '"commits":[1,', 1),  # a row that is not a row
        lambda t: t.replace('],["h"', '] ["h"', 1),  # rows without a comma
        lambda t: "[" + t + "]",  # not an object
    ],
)
def test_state_codec_malformed_streamed_body_raises_value_error(mangle: Callable[[str], str]) -> None:
    text = mangle(state_codec.dumps(_with_commits(_saved_state())))
    with pytest.raises((ValueError, TypeError)):
        state_codec.loads(text)


def test_state_codec_read_names_are_one_copy_per_name() -> None:
    """Every key of a group or topic holds one copy of its name (interned), as the collectors' do."""
    s = state_codec.loads(state_codec.dumps(_with_commits(_saved_state())))
    h1, h2 = (k for k in s.commits if k.group == "h")
    assert h1.group is h2.group and h1.topic is h2.topic
    assert next(iter(s.ranges)).topic is next(iter(s.partitions)).topic is h1.topic


def _with_recreated() -> DetectionState:
    return replace(
        _saved_state(),
        recreated={
            PartitionKey(T, 0): Recreation("A", "B", 20.0, 21.0),
            PartitionKey(T, 1): Recreation("A", None, 30.0),
        },
    )


def test_state_codec_recreated_survives_save_and_load() -> None:
    s = _with_recreated()
    body, parts = state_codec.encode(s)
    assert state_codec.load(body, state_codec.FORMAT, list(parts)) == s
    assert state_codec.loads(state_codec.dumps(s)) == s


def test_state_codec_state_saved_before_recreated_loads_without_it() -> None:
    s = _with_recreated()
    body, parts = state_codec.encode(s)
    small = json.loads(body)
    del small["recreated"]  # what the release before saved
    loaded = state_codec.load(json.dumps(small), state_codec.FORMAT, list(parts))
    assert loaded.recreated == {} and loaded == replace(s, recreated={})
