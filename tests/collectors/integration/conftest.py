"""Fixtures for collector integration tests; helpers live in :mod:`collector_it`."""

from tests.collectors.integration.collector_it import admin_for, collectors_for

__all__ = ["admin_for", "collectors_for"]
