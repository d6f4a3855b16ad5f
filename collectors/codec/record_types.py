"""Record types: the int16 that prefixes every ``__consumer_offsets`` key (the schemas' apiKey)."""

from __future__ import annotations

# Record types (the key's int16 prefix), from the coordinator-key schemas' apiKey.
LEGACY_OFFSET_COMMIT = 0
OFFSET_COMMIT = 1
GROUP_METADATA = 2
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
CONSUMER_GROUP_REGULAR_EXPRESSION = 16
SHARE_GROUP_TYPES = frozenset(range(9, 16))
STREAMS_GROUP_TYPES = frozenset(range(17, 25))
