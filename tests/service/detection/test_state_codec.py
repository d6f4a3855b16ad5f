"""state_codec.encode_changes: a save by change encodes only the parts whose rows changed, and what the
store then holds is what a save from scratch writes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from alerts.current import range_history
from alerts.history import OffsetHistory, RangeHistory
from alerts.state import (
    CommitKey,
    CommitPoint,
    DetectionState,
    GroupPoint,
    OffsetSample,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    RangeSample,
)
from service.detection import state_codec
from service.detection.state_codec import Change, Chunk
from tests.service.detection.builders import T


def _state(commits: int = 6) -> DetectionState:
    keys = [CommitKey(f"g{i // 3}", T, i % 3) for i in range(commits)]
    return DetectionState(
        partitions={PartitionKey(T, p): PartitionPoint(0, 100 + p, 1, 3, (1, 2), "id") for p in range(3)},
        seen=PartitionsSeen(10.0),
        ranges={PartitionKey(T, p): RangeHistory.of([RangeSample(10.0, 0, 100 + p)]) for p in range(3)},
        commits={k: CommitPoint(50 + i, 3, 9.5, 9.0, "tail", "Stable", 2) for i, k in enumerate(keys)},
        commit_history={k: OffsetHistory.of([OffsetSample(9.5, 50 + i)]) for i, k in enumerate(keys)},
        groups={"g0": GroupPoint("Stable", 1.0, topics=(T,))},
        committed_polled_at=9.0,
    )


def _saved(parts: list[Change], stored: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What a store holding ``stored`` holds once ``parts`` are written (None: the stored part stays)."""
    return [(name, text if text is not None else stored[seq][1]) for seq, (name, text) in enumerate(parts)]


def _by_change(
    state: DetectionState, held: list[Chunk | None]
) -> tuple[str, list[Change], list[Chunk | None]]:
    body, parts, chunks = state_codec.encode_changes(state, held)
    return body, list(parts), chunks


def test_encode_changes_nothing_held_encodes_what_encode_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    s = _state()
    body, parts, chunks = _by_change(s, [])
    scratch_body, scratch = state_codec.encode(s)
    assert (body, parts) == (scratch_body, list(scratch))
    assert [(c[0], len(c[1])) for c in chunks if c is not None] == [
        ("partitions", 2),
        ("partitions", 1),
        ("ranges", 2),
        ("ranges", 1),
        *[("commits", 2)] * 3,
        *[("commit_history", 2)] * 3,
    ]


def test_encode_changes_only_changed_chunks_encoded_and_the_whole_as_from_scratch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    s = _state()
    _, first, held = _by_change(s, [])
    stored = [(name, text) for name, text in first if text is not None]
    moved = CommitKey("g1", T, 1)  # the 5th commit: the third commits chunk
    later = replace(
        s,
        partitions={
            **s.partitions,
            PartitionKey(T, 2): replace(s.partitions[PartitionKey(T, 2)], log_end=500),
        },
        commits={**s.commits, moved: replace(s.commits[moved], offset=99)},
        committed_polled_at=20.0,
    )
    body, parts, _ = _by_change(later, held)
    encoded = [seq for seq, (_, text) in enumerate(parts) if text is not None]
    assert encoded == [1, 6]  # the partitions chunk with partition 2, the commits chunk with the move
    scratch_body, scratch = state_codec.encode(later)
    assert body == scratch_body and _saved(parts, stored) == list(scratch)
    assert state_codec.load(body, state_codec.FORMAT, _saved(parts, stored)) == later


def test_encode_changes_equal_but_new_objects_encoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unchanged means the very objects: an equal copy is encoded again (values are replaced whole)."""
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    s = _state()
    _, _, held = _by_change(s, [])
    copied = replace(s, commits={k: replace(v) for k, v in s.commits.items()})
    _, parts, _ = _by_change(copied, held)
    assert [name for name, text in parts if text is not None] == ["commits"] * 3


def test_encode_changes_a_key_gone_encodes_the_chunks_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    s = _state()
    _, first, held = _by_change(s, [])
    stored = [(name, text) for name, text in first if text is not None]
    gone = CommitKey("g0", T, 1)
    later = replace(s, commits={k: v for k, v in s.commits.items() if k != gone})
    body, parts, _ = _by_change(later, held)
    kept = [seq for seq, (_, text) in enumerate(parts) if text is None]
    assert kept == [0, 1, 2, 3, 7, 8, 9]  # partitions, ranges; commit_history still holds the key
    assert _saved(parts, stored) == list(state_codec.encode(later)[1])
    assert state_codec.load(body, state_codec.FORMAT, _saved(parts, stored)) == later


def test_encode_changes_a_section_all_changed_not_held_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A section none of whose held parts was kept (as the partitions of a cluster where every one moves
    every cycle) is not held after that save: encoded at every save from then on, its replaced values let
    go."""
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    s = _state()
    _, _, held = _by_change(s, [])
    assert all(c is not None for c in held)  # a first save: every section held, to be tried
    observed = replace(s, partitions={k: replace(v, log_end=v.log_end + 1) for k, v in s.partitions.items()})
    _, parts, after = _by_change(observed, held)
    assert [seq for seq, (_, text) in enumerate(parts) if text is not None] == [0, 1]
    assert [c[0] if c is not None else None for c in after] == [
        None,
        None,
        *["ranges"] * 2,
        *["commits"] * 3,
        *["commit_history"] * 3,
    ]
    body, parts, _ = _by_change(observed, after)  # the same state again: the partitions encoded anyway
    assert [seq for seq, (_, text) in enumerate(parts) if text is not None] == [0, 1]
    assert body == state_codec.encode(observed)[0]


def test_a_partition_only_observed_again_saves_nothing_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history left as it was while its run goes on (alerts.history.fold_ranges) is saved as the state
    keeps it, and the partitions' observation time beside them: a state whose partitions were only
    observed again encodes no partitions or ranges part, and loads as it was read."""
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 2)
    key = PartitionKey(T, 0)
    run = RangeHistory.of([RangeSample(0.0, 0, 100), RangeSample(5.0, 0, 100)])
    s = replace(_state(), ranges={**_state().ranges, key: run}, seen=PartitionsSeen(10.0))
    _, first, held = _by_change(s, [])
    stored = [(name, text) for name, text in first if text is not None]
    later = replace(s, seen=PartitionsSeen(30.0, {PartitionKey(T, 2): 10.0}))  # partition 2 not listed
    body, parts, _ = _by_change(later, held)
    assert [name for name, text in parts if text is not None] == []
    loaded = state_codec.load(body, state_codec.FORMAT, _saved(parts, stored))
    assert loaded == later
    assert list(range_history(loaded, key)) == [RangeSample(0.0, 0, 100), RangeSample(30.0, 0, 100)]
    assert list(range_history(loaded, PartitionKey(T, 2)))[-1].at == 10.0
