"""Who could be consuming a group's topic at a given moment: its members' subscriptions and assignments.

What the coordinator allows decides what a vanished committed offset means (Kafka's GroupCoordinator and
group-coordinator's OffsetMetadataManager):

* OffsetDelete (``Admin.deleteConsumerGroupOffsets``) is refused for a topic any member subscribes to;
  every topic of an Empty group may go.
* DeleteGroups is refused unless the group is Empty.
* Expiry (KIP-211): an Empty classic group's offsets expire ``offsets.retention.minutes`` after it became
  Empty; in a group with members, only the offsets of topics it does not subscribe to expire, by their
  commit timestamps.

So an offset can vanish under members that consume its topic only by accident (the LinkedIn incident:
offsets of live groups expired); anything else is someone's decision or ordinary expiry.

``GroupPoint.topics`` holds the topics the members subscribe to or are assigned, when that is known:
from a classic GroupMetadata record of the tail (every member's subscription decoded) or from a polled
Stable consumer group (the union of the members' assignments: in a Stable group every partition of a
subscribed topic is assigned to some member).
"""

from __future__ import annotations

from alerts.state import GroupPoint
from collectors.model import GroupInfo

EMPTY = "Empty"
DEAD = "Dead"
STABLE = "Stable"
MEMBERLESS = (EMPTY, DEAD)


def polled_topics(info: GroupInfo) -> tuple[str, ...] | None:
    """Topics the members of a polled group are assigned; None when the poll cannot tell.

    Only a Stable consumer-protocol group with some assignment counts: mid-rebalance assignments are
    empty or stale, and an undecodable assignment reads as empty.
    """
    if info.state in MEMBERLESS:
        return ()
    if info.state != STABLE or info.protocol_type != "consumer":
        return None
    topics = {tp.topic for m in info.members for tp in m.assignment}
    return tuple(sorted(topics)) if topics else None


def polled_point(info: GroupInfo, since: float) -> GroupPoint:
    """The group as a poll of the groups collector shows it, in that state since ``since``."""
    return GroupPoint(
        info.state, since, info.group_type, info.protocol_type, info.group_epoch, polled_topics(info)
    )


def consuming(group: GroupPoint | None, topic: str) -> bool | None:
    """True if a member of ``group`` subscribes to or is assigned ``topic``; False if no member could be
    consuming it (no members at all, or none subscribes to it); None if that is not known."""
    if group is None:
        return None
    if group.state in MEMBERLESS:
        return False
    if group.topics is None:
        return None
    return topic in group.topics


def memberless(group_state: str | None) -> bool:
    """The group has no members: nobody the coordinator knows of is consuming (``assign()`` consumers of
    a standalone group are never members)."""
    return group_state in MEMBERLESS
