"""Fixtures shared by the analytics tests: one small local Spark session for the whole run."""
from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def spark():
    """One ``local[1]`` SparkSession (UTC, no UI, one shuffle partition), stopped at the end.

    Starting a JVM costs seconds, so every analytics test shares this session; tests must not
    change its configuration. One core and one shuffle partition keep tiny frames fast.
    """
    from pyspark.sql import SparkSession

    # py4j logs at INFO while the interpreter exits, after pytest has closed the captured stream
    # the console's LOGGING handler writes to; its chatter is noise in test output anyway.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    session = (
        SparkSession.builder.master("local[1]")
        .appName("gantry-tests")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
