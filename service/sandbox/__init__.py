"""A real KRaft Kafka on loopback for tests and ``make run`` (see :mod:`service.sandbox.cluster`)."""

from service.sandbox.cluster import SandboxCluster as SandboxCluster
from service.sandbox.cluster import start_sandbox as start_sandbox
