"""bench/pipeline helper: fill a sandbox's ``__consumer_offsets`` with offset commits, fast.

One OffsetCommit request (admin ``alter_group_offsets``) carries ``partitions`` partitions of one group, so
1,000,000 commits are 1,000 requests from a few threads.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka import KafkaAdminClient, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import CoordinatorNotAvailableError, NotCoordinatorError
from kafka.structs import OffsetAndMetadata

TOPIC = "bench-pipeline"


def commit_offsets(bootstrap: str, records: int, partitions: int = 1000, threads: int = 4) -> dict[str, Any]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=120_000)
    try:
        admin.create_topics([NewTopic(TOPIC, partitions, 1)], timeout_ms=120_000)
        while sum(p["leader_id"] >= 0 for p in admin.describe_topics([TOPIC])[0]["partitions"]) < partitions:
            time.sleep(0.2)
        tps = [TopicPartition(TOPIC, p) for p in range(partitions)]
        groups = -(-records // partitions)

        def commit(g: int) -> None:
            # 200 groups, each committed from several threads: out-of-order commits show up as rewinds.
            offsets = {tp: OffsetAndMetadata(g * 1000 + tp.partition, "", -1) for tp in tps}
            for _ in range(100):
                try:
                    admin.alter_group_offsets(f"bench-pipeline-{g % 200:04d}", offsets)
                    return
                except (CoordinatorNotAvailableError, NotCoordinatorError):
                    time.sleep(0.5)
            raise RuntimeError(f"group {g}: coordinator never available")

        commit(0)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(commit, range(1, groups)))
        wall = time.perf_counter() - t0
    finally:
        admin.close()
    return {"commits": groups * partitions, "groups": min(groups, 200), "wall_s": wall}
