"""``docs/security.md`` lists exactly the ACL set the sandbox grants and the secured tests run with."""

from __future__ import annotations

import re
from pathlib import Path

from collectors import acls

DOC = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = DOC.index(f"## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end > 0 else None]


def test_security_doc_table_is_exactly_the_granted_set() -> None:
    rows = re.findall(r"^\| (CLUSTER|TOPIC|GROUP) \| `([^`]+)` \| (\w+) \|", _section("The ACLs"), re.M)
    assert rows == [(g.resource, g.name, g.operation) for g in acls.GRANTS]


def test_security_doc_commands_are_the_granted_set() -> None:
    shown = [line for line in _section("The ACLs").splitlines() if line.startswith("kafka-acls.sh")]
    assert shown == acls.kafka_acls_commands("User:offsetguard", "kafka-1:9093")


def test_grants_are_read_only() -> None:
    assert {g.operation for g in acls.GRANTS} <= {"DESCRIBE", "DESCRIBE_CONFIGS", "READ"}
    assert [g.name for g in acls.GRANTS if g.operation == "READ"] == [acls.OFFSETS_TOPIC]
