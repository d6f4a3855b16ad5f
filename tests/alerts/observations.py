"""Generated observation sequences of a healthy cluster, seen the way offsetguard sees one in trouble:
with blind spells (every broker down: nothing observed, nothing changes), partial answers (one
partition's range missing), observations handed twice or late (out of order), and restarts of the service
(the state saved and loaded). For property tests of the detectors; later rules reuse :data:`step` and
:func:`observe`.

The cluster: topic ``t`` with two partitions, group ``g`` committing both, only ever forward. Retention
deletes only what the group has read. Nothing in it is an incident, so no offset alert may come of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from alerts.engine import evaluate
from alerts.model import Finding
from alerts.state import CycleInputs, DetectionState
from collectors.model import Failure, OffsetsObservation
from service.detection import state_codec
from tests.alerts.builders import TH, C, T, committed, groups, inputs, offsets

PARTITIONS = (0, 1)
# A gap longer than this between two observed log ranges is a blind spell (the service's default, 3 x 5 s,
# is raised to 30 s by its floor).
THRESHOLDS = replace(TH, blind_gap_seconds=30.0)
MODES = ("full", "full", "full", "partial", "repeat", "late", "restart", "outage")

step = st.tuples(
    st.sampled_from([5.0, 10.0, 15.0]),  # seconds since the previous cycle
    st.integers(0, 200),  # messages produced on each partition
    st.floats(0, 1),  # how far the group reads towards the log end
    st.floats(0, 1),  # how far retention deletes towards what the group has read
    st.sampled_from(MODES),  # how this cycle is observed
    st.sampled_from([45.0, 150.0, 600.0]),  # how long an outage or a restart lasts
)
Step = tuple[float, int, float, float, str, float]


@dataclass
class World:
    at: float = 0.0
    start: int = 0
    end: int = 1_000
    committed: int = 500

    def ranges(self, parts: tuple[int, ...] = PARTITIONS) -> dict[tuple[str, int], tuple[int, int]]:
        return {(T, p): (self.start, self.end) for p in parts}

    def commits(self) -> dict[tuple[str, str, int], int]:
        return {("g", T, p): self.committed for p in PARTITIONS}


def _full(w: World) -> CycleInputs:
    return inputs(
        offsets=offsets(w.at, w.ranges()),
        committed=committed(w.at, w.commits()),
        groups=groups(w.at, {"g": "Stable"}, assigned={"g": tuple((T, p) for p in PARTITIONS)}),
    )


def observe(steps: list[Step], blind_spells: bool = True) -> Iterator[tuple[Finding, World]]:
    """Run the detectors over the world ``steps`` make; each finding with the world of its cycle.

    ``blind_spells=False`` observes the outages' stretch every 5 s instead (nothing changes in it either):
    the same world seen without blindness.
    """
    w = World()
    s = DetectionState()
    last: CycleInputs | None = None
    for gap, produced, read, deleted, mode, pause in steps:
        if mode in ("outage", "restart"):
            # Nothing changes while every broker is down (or offsetguard is away); then it is seen again.
            stop = w.at + pause
            while not blind_spells and w.at + 5 < stop:
                w.at += 5
                found, s = evaluate(s, _full(w), w.at, THRESHOLDS)
                yield from ((f, w) for f in found)
            w.at = stop
            if mode == "restart":
                s = state_codec.loads(state_codec.dumps(s))
        w.at += gap
        w.end += produced
        w.committed += int((w.end - w.committed) * read)
        w.start += int((w.committed - w.start) * deleted)
        inp = _full(w)
        if mode == "partial":  # partition 1's leader did not answer
            failure = Failure("partition", f"{T}/1", "NotLeaderOrFollower", "no leader")
            inp = replace(
                inp, offsets=OffsetsObservation(C, w.at, offsets(w.at, w.ranges((0,))).partitions, (failure,))
            )
        elif mode == "repeat" and last is not None:
            inp = last  # the same observations handed again
        elif mode == "late" and last is not None:
            inp = replace(last, committed=inp.committed)  # an older log range arriving after a newer one
        found, s = evaluate(s, inp, w.at, THRESHOLDS)
        last = _full(w)
        yield from ((f, w) for f in found)


def run_all(steps: list[Step], blind_spells: bool = True) -> list[Finding]:
    return [f for f, _ in observe(steps, blind_spells)]
