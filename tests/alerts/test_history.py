"""alerts.history: compact persistent sample histories behave as the tuples they replace."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.advance import _sampled
from alerts.current import out_of_range_reason
from alerts.history import OffsetHistory, RangeHistory, fold_ranges, sampled_each, through
from alerts.state import (
    CommitKey,
    CommitPoint,
    OffsetSample,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    RangeSample,
)

KEEP = 10


def _ranges(n: int, start: float = 0.0) -> list[RangeSample]:
    return [RangeSample(start + i, i, 10 + i) for i in range(n)]


def test_history_appended_keeps_newest_and_equals_tuple() -> None:
    h = RangeHistory.of(())
    for s in _ranges(25):
        h = h.appended(s, KEEP)
    assert h == tuple(_ranges(25)[-KEEP:])
    assert tuple(_ranges(25)[-KEEP:]) == h
    assert len(h) == KEEP and h[0] == RangeSample(15.0, 15, 25) and h[-1] == RangeSample(24.0, 24, 34)
    assert list(reversed(h)) == _ranges(25)[-KEEP:][::-1]
    assert h[2:4] == tuple(_ranges(25)[17:19])


def test_history_old_version_unchanged_after_newer_ones() -> None:
    base = RangeHistory.of(_ranges(5))
    a = base.appended(RangeSample(10.0, 50, 60), KEEP)  # writes past base's end in place
    b = base.appended(RangeSample(11.0, 70, 80), KEEP)  # must not overwrite what a holds
    c = base.with_last(RangeSample(12.0, 90, 99))
    d = c.appended(RangeSample(13.0, 91, 99), KEEP)
    assert base == tuple(_ranges(5))
    assert a == (*_ranges(5), RangeSample(10.0, 50, 60))
    assert b == (*_ranges(5), RangeSample(11.0, 70, 80))
    assert c == (*_ranges(4), RangeSample(12.0, 90, 99))
    assert d == (*_ranges(4), RangeSample(12.0, 90, 99), RangeSample(13.0, 91, 99))


def test_history_plus_leaves_the_next_append_in_place() -> None:
    base = RangeHistory.of(_ranges(3))
    looked = base.plus(RangeSample(5.0, 7, 17)).plus(RangeSample(6.0, 8, 18))
    nxt = base.appended(RangeSample(5.0, 9, 19), KEEP)
    assert looked == (*_ranges(3), RangeSample(5.0, 7, 17), RangeSample(6.0, 8, 18))
    assert nxt == (*_ranges(3), RangeSample(5.0, 9, 19))
    assert nxt._at is base._at  # the look wrote nothing: the append continued the shared arrays


def test_histories_of_one_or_two_samples_hold_no_arrays_and_appending_leaves_the_others() -> None:
    # an idle key's history (one or two samples, kept outside the arrays) built every way one is built:
    # none holds arrays of its own (~160 bytes a key), and none is written through another
    empty = OffsetHistory.of(())
    s = [OffsetSample(float(i), 10 * i) for i in range(1, 5)]
    small = [
        empty.appended(s[0], KEEP),
        empty.appended(s[0], KEEP).appended(s[1], KEEP),
        OffsetHistory.of(s[:1]),
        OffsetHistory.of(s[:2]),
        OffsetHistory.decoded(OffsetHistory.of(s[:1]).encoded()),
        OffsetHistory.decoded(OffsetHistory.of(s[:2]).encoded()),
    ]
    assert [h == tuple(s[: 1 + i % 2]) for i, h in enumerate(small)] == [True] * 6
    assert len({id(h._at) for h in [empty, *small]}) == 1
    grown = [h.appended(s[3], KEEP) for h in small]
    assert [h == tuple(s[: 1 + i % 2]) for i, h in enumerate(small)] == [True] * 6
    assert [g == (*s[: 1 + i % 2], s[3]) for i, g in enumerate(grown)] == [True] * 6
    assert empty == () and len(empty._at) == 0
    three = OffsetHistory.decoded(grown[1].encoded())  # three samples: arrays of its own again
    assert three == (s[0], s[1], s[3]) and three._at is not empty._at
    assert small[1].appended(s[3], 1) == (s[3],)  # keeping one: the newest alone


def test_history_arrays_stay_bounded_while_appending() -> None:
    h = OffsetHistory.of(())
    for i in range(10_000):
        h = h.appended(OffsetSample(float(i), i), KEEP)
    assert h == tuple(OffsetSample(float(i), i) for i in range(9_990, 10_000))
    assert len(h._at) <= 2 * KEEP + 40  # the dead prefix is dropped, not kept forever


def test_history_trimmed_drops_oldest() -> None:
    h = RangeHistory.of(_ranges(4)).plus(RangeSample(9.0, 1, 2))
    assert h.trimmed(2) == (RangeSample(3.0, 3, 13), RangeSample(9.0, 1, 2))
    assert h.trimmed(1) == (RangeSample(9.0, 1, 2),)
    assert h.trimmed(9) is h


def test_history_encoded_round_trip_equal() -> None:
    h = RangeHistory.of(_ranges(30)).trimmed(7).plus(RangeSample(99.5, 2**40, 2**41))
    assert RangeHistory.decoded(h.encoded()) == h
    assert OffsetHistory.decoded(OffsetHistory.of(()).encoded()) == ()


@pytest.mark.parametrize(
    "body",
    [
        ["AAAA", "!!"],
        ["AAAAAAAAAAA=", "AAAAAAAAAAA="],
        ["AAAAAAAAAAA=", "AAA="],
        ["AAAAAAAAAAA="],
        [],
        ["AAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAAAA=\u00fc"],
    ],
)
def test_history_decoded_malformed_raises_value_error(body: list[str]) -> None:
    with pytest.raises(ValueError):
        RangeHistory.decoded(body)


def test_history_index_out_of_range_raises() -> None:
    with pytest.raises(IndexError):
        RangeHistory.of(_ranges(2))[2]
    with pytest.raises(IndexError):
        OffsetHistory.of(())[-1]


_times = st.floats(min_value=0, max_value=1000, allow_nan=False)
_offsets = st.integers(min_value=0, max_value=60)
_range = st.builds(lambda t, a, b: RangeSample(t, min(a, b), max(a, b)), _times, _offsets, _offsets)


@settings(max_examples=300, deadline=None)
@given(
    history=st.lists(_range, max_size=12),
    ordered=st.booleans(),
    extra=st.lists(_range, max_size=2),
    offset=_offsets,
    committed_at=_times,
    moved_after=_times,
)
def test_history_out_of_range_reason_same_as_walk(
    history: list[RangeSample],
    ordered: bool,
    extra: list[RangeSample],
    offset: int,
    committed_at: float,
    moved_after: float,
) -> None:
    if ordered:
        history = sorted(history)
    h = RangeHistory.of(history)
    for s in extra:
        h = h.plus(s)
    samples = [*history, *extra]
    assert out_of_range_reason(offset, committed_at, moved_after, h) == out_of_range_reason(
        offset, committed_at, moved_after, samples
    )


@settings(max_examples=200, deadline=None)
@given(
    history=st.lists(_range, max_size=12),
    ordered=st.booleans(),
    offset=_offsets,
    committed_at=_times,
    moved_after=_times,
)
def test_history_decoded_out_of_range_reason_same_as_walk(
    history: list[RangeSample], ordered: bool, offset: int, committed_at: float, moved_after: float
) -> None:
    """A history read back from a saved state knows whether its samples are in time order (a shortcut
    taken on an unordered one would miss a sample)."""
    if ordered:
        history = sorted(history)
    h = RangeHistory.decoded(RangeHistory.of(history).encoded())
    assert out_of_range_reason(offset, committed_at, moved_after, h) == out_of_range_reason(
        offset, committed_at, moved_after, history
    )


@settings(max_examples=300, deadline=None)
@given(
    history=st.lists(_range, max_size=12),
    decoded=st.booleans(),
    appended=st.lists(_range, max_size=12),
    keep=st.integers(1, 6),
    offset=_offsets,
    committed_at=_times,
    moved_after=_times,
)
def test_history_ranged_out_of_range_reason_same_as_walk(
    history: list[RangeSample],
    decoded: bool,
    appended: list[RangeSample],
    keep: int,
    offset: int,
    committed_at: float,
    moved_after: float,
) -> None:
    """Grown sample by sample (and trimmed to ``keep``) as detection grows it, from scratch or from a
    saved state: the bound on its log starts never hides one above the offset."""
    h = RangeHistory.of(sorted(history))
    if decoded:
        h = RangeHistory.decoded(h.encoded())
    for s in sorted(appended):
        h = h.ranged(s, keep)
    assert out_of_range_reason(offset, committed_at, moved_after, h) == out_of_range_reason(
        offset, committed_at, moved_after, list(h)
    )


def _ranged_as_tuples(
    kept: tuple[RangeSample, ...], sample: RangeSample, keep: int
) -> tuple[RangeSample, ...]:
    """The tuple implementation this module replaced: the reference."""
    if len(kept) >= 2 and kept[-1][1:] == sample[1:] and kept[-2][1:] == sample[1:]:
        return (*kept[:-1], sample)
    return (*kept, sample)[-keep:]


def _sampled_as_tuples(
    kept: tuple[OffsetSample, ...], now: float, offset: int, keep: int, spacing: float
) -> tuple[OffsetSample, ...]:
    if kept and kept[-1].offset == offset:
        if spacing > 0 and now - kept[-1].at < spacing:
            return kept
        if len(kept) >= 2 and kept[-2].offset == offset:
            return (*kept[:-1], OffsetSample(now, offset))
    out = (*kept, OffsetSample(now, offset))[-keep:]
    if spacing > 0 and len(out) >= 3 and out[-2].at - out[-3].at < spacing:
        out = (*out[:-2], out[-1])
    return out


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=60),
    keep=st.integers(1, 12),
)
def test_history_ranged_same_as_tuples(steps: list[tuple[int, int]], keep: int) -> None:
    ref: tuple[RangeSample, ...] = ()
    h: object = ()
    for i, (start, grow) in enumerate(steps):
        sample = RangeSample(float(i), start, start + grow)
        ref = _ranged_as_tuples(ref, sample, keep)
        h = RangeHistory.of(h).ranged(sample, keep)  # type: ignore[arg-type]
        assert h == ref


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(1, 90), st.integers(0, 3)), max_size=60),
    keep=st.integers(1, 12),
    spacing=st.sampled_from([0.0, 60.0]),
)
def test_history_sampled_same_as_tuples(steps: list[tuple[int, int]], keep: int, spacing: float) -> None:
    ref: tuple[OffsetSample, ...] = ()
    h: object = ()
    now = 0.0
    for gap, offset in steps:
        now += gap
        ref = _sampled_as_tuples(ref, now, offset, keep, spacing)
        h = _sampled(h, now, offset, keep, spacing)  # type: ignore[arg-type]
        assert h == ref


@pytest.mark.parametrize("spacing", [0.0, 60.0])
@pytest.mark.parametrize("now", [100.0, 130.0, 20.0])  # within spacing of the newest, past it, clock back
def test_sampled_each_equals_sampling_each_history_alone(spacing: float, now: float) -> None:
    """A sweep's fold of every history (the unchanged ones told apart without a call) gives each history
    what sampling it alone gives, the unchanged ones as the very objects."""
    idle = OffsetHistory.of([OffsetSample(10.0, 5), OffsetSample(50.0, 5)])
    histories = {
        CommitKey("g", "t", 0): idle,  # newest 50 s old at 100: kept with spacing 60
        CommitKey("g", "t", 1): OffsetHistory.of([OffsetSample(10.0, 5), OffsetSample(50.0, 6)]),
        CommitKey("g", "t", 2): OffsetHistory.of([OffsetSample(10.0, 5)]),  # moved since
        CommitKey("g", "t", 3): (OffsetSample(40.0, 9), OffsetSample(45.0, 9)),  # not a history yet
        CommitKey("g", "t", 4): OffsetHistory.of(()),
    }
    offsets = {0: 5, 1: 6, 2: 8, 3: 9, 4: 1, 5: 3}  # 5: no history at all
    commits = {CommitKey("g", "t", p): CommitPoint(o, None, 1.0, 1.0, "tail") for p, o in offsets.items()}
    got = sampled_each(histories, commits, now, KEEP, spacing, _sampled)
    want = {k: _sampled(histories.get(k, ()), now, c.offset, KEEP, spacing) for k, c in commits.items()}
    assert got == want and list(got) == list(want)
    assert [type(h) for h in got.values()] == [type(h) for h in want.values()]
    assert (got[CommitKey("g", "t", 0)] is idle) == (spacing > 0 and now - 50.0 < spacing)


# Partitions of fold_ranges' property test: two, so one's change and the other's run mix in one fold.
_KEYS = (PartitionKey("t", 0), PartitionKey("t", 1))


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=2, max_size=2),
            st.sets(st.sampled_from(_KEYS)),  # observed this step
            st.sets(st.sampled_from(_KEYS)),  # whose point the next state does not keep (unconfirmed)
        ),
        max_size=40,
    ),
    keep=st.integers(1, 8),
)
def test_fold_ranges_read_through_the_points_equals_every_sample_taken(
    steps: list[tuple[list[tuple[int, int]], set[PartitionKey], set[PartitionKey]]], keep: int
) -> None:
    """What the state keeps (histories left as they were while their run goes on, and the partitions'
    points), read with ``through``, is each history as ``ranged`` gives it taking every sample."""
    eager: dict[PartitionKey, object] = {}
    ranges: dict[PartitionKey, Sequence[RangeSample]] = {}
    points: dict[PartitionKey, PartitionPoint] = {}
    times: dict[PartitionKey, float] = {}  # when each of ``points`` was observed
    for i, (values, observed, unconfirmed) in enumerate(steps):
        at = 5.0 * i
        now = {
            k: PartitionPoint(start, start + grow)
            for k, (start, grow) in zip(_KEYS, values, strict=True)
            if k in observed
        }
        ranges = dict(ranges)
        fold_ranges(ranges, now, at, points, PartitionsSeen(None, dict(times)), keep, unconfirmed)
        kept = {k: p for k, p in now.items() if k not in unconfirmed or k not in points}
        points = {**points, **kept}
        times.update(dict.fromkeys(kept, at))
        for k, p in now.items():
            sample = RangeSample(at, p.log_start, p.log_end)  # type: ignore[arg-type]
            eager[k] = RangeHistory.of(eager.get(k, ())).ranged(sample, keep)  # type: ignore[arg-type]
        for k in _KEYS:
            assert through(ranges.get(k), points.get(k), times.get(k, 0.0)) == eager.get(k, ())


def test_fold_ranges_an_idle_partition_keeps_its_history_object() -> None:
    key = _KEYS[0]
    ranges: dict[PartitionKey, Sequence[RangeSample]] = {}
    points: dict[PartitionKey, PartitionPoint] = {}
    kept = []
    for at in (0.0, 5.0, 10.0, 15.0):
        now = {key: PartitionPoint(3, 9)}
        fold_ranges(ranges, now, at, points, PartitionsSeen(at - 5.0), KEEP, ())
        points = now
        kept.append(ranges[key])
    assert kept[2] is kept[1] and kept[3] is kept[1]  # a run from the second sample on: nothing rebuilt
    assert list(through(ranges[key], points[key], 15.0)) == [RangeSample(0.0, 3, 9), RangeSample(15.0, 3, 9)]
    fold_ranges(ranges, {key: PartitionPoint(3, 11)}, 20.0, points, PartitionsSeen(15.0), KEEP, ())
    assert list(ranges[key]) == [RangeSample(0.0, 3, 9), RangeSample(15.0, 3, 9), RangeSample(20.0, 3, 11)]


@pytest.mark.parametrize(
    ("at", "start", "end", "newest"),
    [
        (30.0, 3, 9, 30.0),  # later, same range: the run goes on to it
        (10.0, 3, 9, 20.0),  # not later: as it is
        (30.0, 3, 10, 20.0),  # another range: as it is (the next fold appends it)
    ],
)
def test_extended_moves_only_a_run_s_newest_sample(at: float, start: int, end: int, newest: float) -> None:
    run = RangeHistory.of([RangeSample(0.0, 3, 9), RangeSample(20.0, 3, 9)])
    assert run.extended(at, start, end)[-1].at == newest
    lone = RangeHistory.of([RangeSample(0.0, 1, 2), RangeSample(20.0, 3, 9)])  # no run: never moved
    assert lone.extended(30.0, 3, 9) is lone
