"""One replayed history with every incident kind, as tail events, log-range samples and cycle times.

The same events go through the online detectors (:func:`alerts.engine.evaluate`, cycle by cycle, as the
service would see them) and through the archive and the Spark pipeline, so the two can be compared.
Times are seconds after ``T0``; each cycle says which events it delivers and which ranges it observed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.codec import (
    ConsumerGroupMetadata,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    OffsetCommit,
    OffsetCommitTombstone,
)
from collectors.codec.record_types import CONSUMER_GROUP_METADATA
from collectors.codec.records import Record
from collectors.tail_model import TailEvent

CLUSTER = "c"
T0 = 1_700_000_000


def commit(group: str, topic: str, partition: int, offset: int, at: float) -> OffsetCommit:
    return OffsetCommit(1, group, topic, partition, 3, offset, None, "", int((T0 + at) * 1000), None, None)


def group_state(group: str, members: int) -> GroupMetadata:
    member = MemberMetadata("m-1", None, "client", "/127.0.0.1", 300000, 45000, b"", b"")
    return GroupMetadata(group, 3, "consumer", 1, "range", "m-1", None, (member,) * members)


@dataclass
class Cycle:
    now: float  # seconds after T0
    records: list[tuple[float, Record]] = field(default_factory=list)  # (record time, record)
    ranges: dict[tuple[str, int], tuple[int, int]] | None = None  # observed at ``now``
    redeliver: int = 0  # the tail hands the last N events of the previous cycle again (at least once)


CYCLES = [
    Cycle(
        10,
        [
            (0, group_state("g1", 1)),
            (1, commit("g1", "t", 0, 100, 1)),
            (2, group_state("g2", 1)),
            (2, commit("g2", "t", 1, 50, 2)),
            (3, commit("g3", "t", 2, 10, 3)),
            (5, commit("g1", "t", 0, 150, 5)),
            (5, commit("g4", "u", 0, 10, 5)),
            (6, group_state("g8", 1)),
            (6, commit("g8", "x", 0, 150, 6)),
            (7, commit("g9", "y", 0, 300, 7)),  # then stopped
            (8, group_state("g12", 0)),  # stopped (Empty) at 100 of z/0
            (8, commit("g12", "z", 0, 100, 8)),
            (8, group_state("g14", 1)),  # a member at 100 of z/0 ...
            (8, commit("g14", "z", 0, 100, 8)),
            (9, group_state("g13", 1)),
            (9, commit("g13", "x", 1, 120, 9)),
        ],
    ),
    Cycle(
        30,
        [(20, commit("g5", "v", 0, 500, 20))],
        ranges={
            ("u", 0): (0, 20),
            ("v", 0): (0, 400),
            ("x", 0): (0, 160),
            ("x", 1): (0, 130),
            ("y", 0): (0, 1500),
            ("z", 0): (0, 400),
        },
    ),
    # x/0 and x/1 truncated to 100 (unclean election): g8's 150 and g13's 120 are beyond the log end;
    # delete-records moves y/0's log start to 700, past g9's 300
    Cycle(
        50,
        [],
        ranges={
            ("u", 0): (40, 100),
            ("v", 0): (0, 400),
            ("x", 0): (0, 100),
            ("x", 1): (0, 100),
            ("y", 0): (700, 1500),
            ("z", 0): (0, 400),
        },
    ),
    Cycle(
        100,
        [
            (60, OffsetCommitTombstone(1, "g2", "t", 1)),  # g2 is Stable: lost while consuming
            (80, commit("g4", "u", 0, 100, 80)),  # from 10, below log start 40: skip of 90
            (90, commit("g1", "t", 0, 120, 90)),  # rewind of 30
            (60, commit("g8", "x", 0, 150, 60)),  # auto-commit of the unchanged (out of range) position
            # back to the log end 110: reset to latest (10 written since the truncation skipped) or to
            # earliest (the 100 kept re-read, then the 10): which is unknown, nothing certain
            (95, commit("g8", "x", 0, 110, 95)),
            # earliest (700), read on to 1000, below the log end 1500 sampled while 300 was still
            # fetchable (where a reset to latest lands at least): 400 deleted unread, 300 read
            (96, commit("g9", "y", 0, 1000, 96)),
            (97, commit("g12", "z", 0, 400, 97)),  # an operator's reset of the Empty group: 300 skipped
            (98.5, group_state("g14", 0)),  # ... leaves; 400 committed 0.5 s later: its own last commit
            (99, commit("g14", "z", 0, 400, 99)),  # (read) or an operator's reset: at most 300 skipped
            # below the truncated end 100: no reset to latest; 10 of the kept re-read (not 30: 100..120
            # held messages the truncation destroyed)
            (94, commit("g13", "x", 1, 90, 94)),
        ],
        ranges={
            ("u", 0): (40, 100),
            ("v", 0): (0, 400),
            ("x", 0): (0, 110),
            ("x", 1): (0, 105),
            ("y", 0): (700, 1500),
            ("z", 0): (0, 400),
        },
    ),
    Cycle(200, [(190, commit("g1", "t", 0, 300, 190))], redeliver=2),
    Cycle(
        2100,
        [
            (2000, OffsetCommitTombstone(1, "g3", "t", 2)),  # idle standalone group: not "while consuming"
            (2010, group_state("g6", 0)),
            (2011, commit("g6", "w", 0, 5, 2011)),
            (2050, OffsetCommitTombstone(1, "g6", "w", 0)),  # DeleteGroups of an Empty group
            (2051, GroupTombstone(2, "g6")),
            (2060, commit("g7", "t", 3, 70, 2060)),
            (2070, commit("g7", "t", 3, 20, 2070)),  # rewind of 50 ...
            (2075, commit("g7", "t", 3, 70, 2075)),  # ... undone 5 s later: a stale member's recommit
            (2080, group_state("g10", 0)),
            (2081, commit("g10", "w", 0, 9, 2081)),  # a tool commits for a group without members ...
            (2090, OffsetCommitTombstone(1, "g10", "w", 0)),  # ... and deletes it: nobody was consuming
            # a KIP-848 group (known by its epoch only: its members come and go by member records) deleted
            # right after its last commit: DeleteGroups only deletes a group without members
            (2082, ConsumerGroupMetadata("g11", 0, 4, 0)),
            (2083, commit("g11", "w", 0, 7, 2083)),
            (2091, OffsetCommitTombstone(1, "g11", "w", 0)),
            (2091, GroupTombstone(CONSUMER_GROUP_METADATA, "g11")),
        ],
    ),
    Cycle(2200, []),  # lets pending rewinds age past the recommit window
]

# What the online detectors and the pipeline must both find: (kind, group, topic, partition, magnitude).
EXPECTED = {
    ("offset_rewind", "g1", "t", 0, 30),
    ("offset_rewind", "g7", "t", 3, 50),
    (
        "offset_skip",
        "g4",
        "u",
        0,
        30,
    ),  # 10 -> 100 over a log start of 40: 30 deleted unread, the rest unknown
    ("offsets_lost", "g2", "t", 1, 1),
    ("committed_below_log_start", "g4", "u", 0, 30),
    ("committed_beyond_log_end", "g5", "v", 0, 100),
    ("offset_skip", "g8", "x", 0, 0),  # back from beyond a truncated log end to it: a skip, nothing certain
    ("committed_beyond_log_end", "g8", "x", 0, 50),
    ("offset_skip", "g9", "y", 0, 400),  # 300 -> 1000 over a log start of 700: 300 of it read on
    ("committed_below_log_start", "g9", "y", 0, 400),
    ("offset_skip", "g12", "z", 0, 300),  # a forward reset while Empty (admin_reset): 100..400 skipped
    ("offset_skip", "g14", "z", 0, 0),  # just after the last member left: 0 skipped for certain, 300 at most
    ("offset_rewind", "g13", "x", 1, 10),  # below the truncated end: min(120, 100) - 90
    ("committed_beyond_log_end", "g13", "x", 1, 20),
}


def tail_batches() -> list[list[TailEvent]]:
    """The events of each cycle, in log order of one ``__consumer_offsets`` partition (0)."""
    batches: list[list[TailEvent]] = []
    source_offset = 0
    for cycle in CYCLES:
        events = batches[-1][-cycle.redeliver :] if cycle.redeliver and batches else []
        for at, record in cycle.records:
            events.append(TailEvent(CLUSTER, 0, source_offset, int((T0 + at) * 1000), record))
            source_offset += 1
        batches.append(events)
    return batches


def range_samples() -> list[tuple[str, str, int, int, int, int]]:
    """(cluster, topic, partition, at ms, log_start, log_end) of every cycle's range observation."""
    return [
        (CLUSTER, topic, partition, int((T0 + c.now) * 1000), start, end)
        for c in CYCLES
        if c.ranges
        for (topic, partition), (start, end) in c.ranges.items()
    ]
