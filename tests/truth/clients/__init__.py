"""The ground-truth harness's consumers: real client libraries, each run as an application runs it.

:func:`start_member` starts one (``kafka-python``, ``aiokafka``, ``librdkafka``, ``java-classic``,
``java-consumer``) in a process of its own; :class:`Member` stops, kills and inspects it.
"""

from tests.truth.clients.member import (
    AUTO_CREATE_FIXED,
    CLIENTS,
    JAVA_CLIENTS,
    PYTHON_CLIENTS,
    Client,
    Member,
    MemberFailed,
    NotApplicable,
    start_member,
)

__all__ = [
    "AUTO_CREATE_FIXED",
    "CLIENTS",
    "JAVA_CLIENTS",
    "PYTHON_CLIENTS",
    "Client",
    "Member",
    "MemberFailed",
    "NotApplicable",
    "start_member",
]
