"""A dashboard refresh on a real Spark standalone cluster equals the local one.

A master and one worker (one core, 1 GiB) start from the installed PySpark's ``spark-class`` on
loopback; ``manage.py dashboard_refresh`` (the runner the analytics worker's task calls, its session
built from settings) runs with ``SPARK_MASTER=spark://127.0.0.1:<port>`` in a process of its own:
this test process may already hold the suite's local session (tests/fixtures/spark.py), and one
Python process gets one SparkContext. Driver and executor share this machine, so both see the lake
directory, as a shared filesystem would give them on real hosts; the executor runs this virtualenv's
Python (PYSPARK_PYTHON). The same lake is then refreshed on the local session and the result tables
compared row for row.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from analytics.models import BacklogPoint, BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint
from analytics.runner import dashboard_refresh
from tests.analytics._lake import at, steady_workload
from tests.fixtures.ports import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
READY_S = 90.0  # two JVMs starting on a loaded machine
FAST_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"  # start-up over peak speed: the data is tiny


@dataclass(frozen=True)
class SparkStandalone:
    master_url: str
    env: dict[str, str]  # what a driver and its executors need (loopback, this virtualenv's Python)
    work_dir: Path  # the worker's: one directory per application it ran executors for


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _wait_for(proc: subprocess.Popen, log: Path, marker: str, what: str) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if marker in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError(f"Spark {what} not ready (exit code {proc.poll()}):\n{log.read_text(errors='replace')[-4000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop the JVM and anything it started (its process group): SIGTERM, then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def spark_standalone(tmp_path_factory) -> Iterator[SparkStandalone]:
    """A Spark standalone master and one registered worker on loopback; both stopped after the module."""
    home = _spark_home()
    work = tmp_path_factory.mktemp("spark-standalone")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_NO_DAEMONIZE": "1",
        "SPARK_WORKER_DIR": str(work / "work"),
        # small, quick-starting JVMs for the master and worker daemons
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": FAST_JVM,
    }
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    port, ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    procs: list[subprocess.Popen] = []

    def start(name: str, argv: list[str], marker: str) -> None:
        log = work / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [spark_class, *argv], cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        procs.append(proc)
        _wait_for(proc, log, marker, name)

    try:
        start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            "I have been elected leader",
        )
        start(
            "worker",
            [
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--webui-port",
                str(worker_ui),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(work / "work"),
            ],
            "Successfully registered with master",
        )
        yield SparkStandalone(url, env, work / "work")
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _database_url() -> str:
    """The test database as a DATABASE_URL, for the refresh process to write where this test reads."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    from urllib.parse import quote

    auth = f"{quote(db['USER'] or '')}:{quote(db['PASSWORD'] or '')}@" if db.get("USER") else ""
    return f"postgres://{auth}{db.get('HOST') or ''}{':' + str(db['PORT']) if db.get('PORT') else ''}/{db['NAME']}"


def _results() -> dict[str, list[tuple]]:
    """Every result table as sorted tuples (ids, run references and float noise left out)."""

    def rows(model, *fields: str) -> list[tuple]:
        return sorted(
            tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in model.objects.values_list(*fields)
        )

    return {
        "throughput": rows(
            ThroughputPoint,
            "resolution",
            "level",
            "window_start",
            "broker",
            "topic",
            "queue_id",
            "messages",
            "msgs_per_s",
            "bytes_per_s",
        ),
        "backlog": rows(BacklogPoint, *[f.name for f in BacklogPoint._meta.concrete_fields if f.name != "id"]),
        "trends": rows(BacklogTrend, *[f.name for f in BacklogTrend._meta.concrete_fields if f.name != "id"]),
        "rankings": rows(Ranking, *[f.name for f in Ranking._meta.concrete_fields if f.name != "id"]),
    }


def test_a_refresh_on_a_standalone_cluster_equals_the_local_one(spark_standalone, spark, lake):
    steady_workload(lake, at("13:40"), at("14:10"), every_s=30)
    env = {
        **spark_standalone.env,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": _database_url(),
        "SPARK_MASTER": spark_standalone.master_url,
        "GANTRY_LAKE_DIR": str(lake),
        "GANTRY_SAMPLE_INTERVAL_S": "30",
        "PYTHONUNBUFFERED": "1",
        # one core, small JVMs: the worker offers 1 GiB, an executor's default asks for all of it
        "PYSPARK_SUBMIT_ARGS": (
            f"--conf spark.executor.memory=512m --conf spark.cores.max=1 --driver-memory 512m "
            f"--conf spark.driver.extraJavaOptions='{FAST_JVM}' "
            f"--conf spark.executor.extraJavaOptions='{FAST_JVM}' pyspark-shell"
        ),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "dashboard_refresh", "--as-of", "2026-11-22T14:10:05Z"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    cluster_run = json.loads(done.stdout.strip().splitlines()[-1])
    assert cluster_run["status"] == "succeeded" and cluster_run["rows_read"] == 2 * 2 * 61
    assert list(spark_standalone.work_dir.glob("app-*/*/stderr")), "no executor ran on the worker"
    on_cluster = _results()
    assert on_cluster["throughput"] and on_cluster["backlog"] and on_cluster["trends"] and on_cluster["rankings"]

    # the same refresh again on the local session, from a clean slate
    for model in (ThroughputPoint, BacklogPoint, BacklogTrend, Ranking, DashboardState, RefreshRun):
        model.objects.all().delete()
    local_run = dashboard_refresh(trigger="manual", requested_by="test", spark=spark, as_of=at("14:10:05"), root=lake)
    assert local_run.status == "succeeded", local_run.error
    assert local_run.rows_read == cluster_run["rows_read"]
    assert _results() == on_cluster
