"""The SparkSession of the analytics worker, built from settings once per process and reused.

Master ``settings.SPARK_MASTER`` (``local[*]`` by default; a ``spark://`` or cluster master
works the same). The session time zone is UTC (the lake and the jobs are UTC throughout),
partition column type inference is off (``date=2026-11-22`` stays a string; the runner passes
the lake's schema anyway), the UI is off (nobody browses a worker's port), and shuffles use few
partitions: a refresh moves kilobytes to megabytes, where Spark's default of 200 partitions
only adds scheduling overhead. ``GANTRY_ANALYTICS["SPARK_CONF"]`` (a dict) adds or overrides
any other Spark setting.

Celery's prefork pool forks its children before any task runs, and the session is made on the
first refresh in the child that runs it, so no JVM is ever shared across a fork.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_SHUFFLE_PARTITIONS = 4  # a few per core of a small worker; the data is small

_lock = threading.Lock()
_session: SparkSession | None = None
_pid: int | None = None


def spark_conf() -> dict[str, str]:
    """The Spark settings the factory applies, from Django's settings."""
    from django.conf import settings

    analytics = getattr(settings, "GANTRY_ANALYTICS", {})
    master = getattr(settings, "SPARK_MASTER", "local[*]") or "local[*]"
    conf = {
        "spark.master": master,
        "spark.app.name": "gantry-analytics",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # the jobs' per-queue windows (lag over ts) hold a queue's samples: 8 days at 10 s is ~69k;
        # past the default 4,096 rows Spark spills them, measured 2x slower (docs/benchmarks.md)
        "spark.sql.windowExec.buffer.in.memory.threshold": "32768",  # progress bars garble the worker's log; the run records its own progress
        "spark.sql.shuffle.partitions": str(analytics.get("SHUFFLE_PARTITIONS", DEFAULT_SHUFFLE_PARTITIONS)),
    }
    if master.startswith("local"):
        # The driver talks to itself only: stay on loopback whatever the host name resolves to.
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.driver.host"] = "127.0.0.1"
    conf.update({str(k): str(v) for k, v in (analytics.get("SPARK_CONF") or {}).items()})
    return conf


def spark_session() -> SparkSession:
    """This process's SparkSession, made on first use from :func:`spark_conf`."""
    global _session, _pid
    from pyspark.sql import SparkSession

    with _lock:
        session = _session
        alive = session is not None and _pid == os.getpid() and session.sparkContext._jsc is not None
        if session is None or not alive:
            builder = SparkSession.builder
            for key, value in spark_conf().items():
                builder = builder.config(key, value)
            session = builder.getOrCreate()
            session.sparkContext.setLogLevel("WARN")
            _session, _pid = session, os.getpid()
        return session


def spark_stop() -> None:
    """Stop this process's session, if it made one; the next :func:`spark_session` makes a new one.

    Called when a refresh failed because the JVM went away (killed, out of memory): a session
    whose gateway is dead would fail every later refresh of this worker.
    """
    global _session, _pid
    with _lock:
        session, mine = _session, _pid == os.getpid()
        _session = None
        _pid = None
    if session is not None and mine:
        try:
            session.stop()
        except Exception as exc:  # noqa: BLE001 (a dead gateway cannot stop anything; dropping it is enough)
            log.info("stopping the Spark session failed (dropped anyway): %s", exc)


def is_gateway_failure(exc: BaseException) -> bool:
    """True when ``exc`` says the Python side lost its JVM (not an error of a job)."""
    from py4j.protocol import Py4JNetworkError

    return isinstance(exc, (Py4JNetworkError, ConnectionError, EOFError))
