"""Fixtures of the analytics tests (the Spark session is tests/fixtures/spark.py)."""
from __future__ import annotations

import pytest


@pytest.fixture
def lake(settings, tmp_path):
    """A lake directory of this test's own, in the settings (samples every 30 s unless a test says)."""
    root = tmp_path / "lake"
    settings.GANTRY_ANALYTICS = {**settings.GANTRY_ANALYTICS, "LAKE_DIR": str(root), "SAMPLE_INTERVAL_S": 30.0,
                                 "RUN_HEARTBEAT_S": 0.5}
    return root
