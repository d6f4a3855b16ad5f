"""Pipeline tests share the session's SparkSession (``spark``, tests/conftest.py); they are skipped when
pyspark is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
