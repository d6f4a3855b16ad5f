"""Run Kafka 4.1.2's own ``__consumer_offsets`` decoders on a sandbox and parse what they print.

* ``ConsoleConsumer --formatter OffsetsMessageFormatter`` (types 0, 1) and ``GroupMetadataMessageFormatter``
  (type 2): one JSON object per record, written WITHOUT a separator and without partition or offset
  (``CoordinatorRecordMessageFormatter`` ignores ``print.partition``/``print.offset``). They skip
  records of other types, null keys and unknown types. Subscription/assignment bytes print as base64.
* ``kafka.tools.DumpLogSegments --offsets-decoder`` over the segment files: every record with its
  offset, all group-coordinator types (3–8 and 16 included — 4.1.2 has no console formatter for
  them), tombstones as ``payload: <DELETE>``, transaction markers as ``endTxnMarker``; a ``consumer``
  group's subscription/assignment printed decoded.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from sandbox.cluster import SandboxCluster

OFFSETS_FORMATTER = "org.apache.kafka.tools.consumer.OffsetsMessageFormatter"
GROUP_FORMATTER = "org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter"
Json = dict[str, Any]

_DECODER = json.JSONDecoder()
_PROCESSED = re.compile(r"Processed a total of (\d+) messages")
_DUMPING = re.compile(r"^Dumping .*/__consumer_offsets-(\d+)/\d+\.log$")
_RECORD = re.compile(r"^\| offset: (\d+) ")


@dataclass
class FormatterOutput:
    printed: list[Json]
    consumed: int  # what the console consumer received, printed or not


def run_console_formatter(cluster: SandboxCluster, formatter: str, *, isolation: str) -> FormatterOutput:
    """Read all of ``__consumer_offsets`` once through ``formatter``; fail on a tool error."""
    done = cluster.run_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--topic",
        "__consumer_offsets",
        "--from-beginning",
        "--group",
        f"golden-formatter-{uuid.uuid4().hex[:8]}",
        "--formatter",
        formatter,
        "--consumer-property",
        "exclude.internal.topics=false",
        "--isolation-level",
        isolation,
        "--timeout-ms",
        "4000",
        timeout=120,
    )
    processed = _PROCESSED.search(done.stderr)
    assert done.returncode == 0 and processed, f"{formatter} failed: {done.stderr[-3000:]}"
    assert "Could not read record" not in done.stderr, done.stderr[-3000:]
    return FormatterOutput(parse_concatenated_json(done.stdout), int(processed.group(1)))


def parse_concatenated_json(text: str) -> list[Json]:
    """``{...}{...}`` (the formatters write no separator) into a list of objects."""
    out: list[Json] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out
        obj, pos = _DECODER.raw_decode(text, pos)
        out.append(obj)


@dataclass
class DumpOutput:
    records: dict[tuple[int, int], Json] = field(default_factory=dict)  # {"key": .., "value": ..}
    markers: set[tuple[int, int]] = field(default_factory=set)  # transaction markers
    skipped: dict[tuple[int, int], str] = field(default_factory=dict)  # lines with no JSON key


def dump_log_segments(cluster: SandboxCluster) -> DumpOutput:
    """``DumpLogSegments --offsets-decoder`` over every ``__consumer_offsets`` segment of every broker."""
    files = sorted(
        str(path)
        for node in cluster.brokers.values()
        for path in (node.directory / "data").glob("__consumer_offsets-*/*.log")
    )
    assert files, "no __consumer_offsets segments found"
    done = cluster.run_tool("kafka.tools.DumpLogSegments", "--offsets-decoder", "--files", ",".join(files))
    assert done.returncode == 0, done.stderr[-3000:]
    return parse_dump(done.stdout)


def parse_dump(text: str) -> DumpOutput:
    out = DumpOutput()
    partition = -1
    for line in text.splitlines():
        if m := _DUMPING.match(line):
            partition = int(m.group(1))
            continue
        m = _RECORD.match(line)
        if not m:
            continue
        where = (partition, int(m.group(1)))
        if " endTxnMarker: " in line:
            out.markers.add(where)
            continue
        start = line.find(" key: {")
        if start < 0:
            out.skipped[where] = line
            continue
        key, end = _DECODER.raw_decode(line, start + len(" key: "))
        payload = line[end:].removeprefix(" payload: ")
        value = None if payload == "<DELETE>" else json.loads(payload)
        out.records[where] = {"key": _ints(key, "type"), "value": value and _ints(value, "version")}
    return out


def _ints(obj: Json, name: str) -> Json:
    """DumpLogSegments prints the key type and value version as strings; the formatters as numbers."""
    return {**obj, name: int(obj[name])}
