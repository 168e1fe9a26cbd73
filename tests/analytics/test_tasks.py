"""The analytics tasks as Celery sees them: the beat schedule names real tasks, the refresh is
routed to the ``analytics`` queue, a real worker samples into the lake; the Spark session's
settings."""

from __future__ import annotations

import time

import pytest

from analytics.spark import spark_conf


def test_the_beat_schedule_runs_registered_tasks_and_the_refresh_goes_to_the_analytics_queue(settings):
    from console.celery import app

    app.loader.import_default_modules()
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert schedule["metrics-sample"]["task"] == "analytics.tasks.metrics_sample_task" in app.tasks
    assert schedule["metrics-sample"]["schedule"] == settings.GANTRY_ANALYTICS["SAMPLE_INTERVAL_S"]
    nightly = schedule["dashboard-refresh-nightly"]
    assert nightly["task"] == "analytics.tasks.dashboard_refresh_task" in app.tasks and nightly["kwargs"] == {
        "trigger": "nightly"
    }
    task = app.tasks["analytics.tasks.dashboard_refresh_task"]
    assert app.amqp.router.route({}, task.name)["queue"].name == "analytics"
    assert (
        task.acks_late
        and task.time_limit == settings.GANTRY_TASK_TIME_LIMITS["dashboard_refresh"] > task.soft_time_limit
    )


def test_the_spark_session_is_built_from_settings(settings):
    settings.SPARK_MASTER = "local[2]"
    conf = spark_conf()
    assert conf["spark.master"] == "local[2]" and conf["spark.sql.session.timeZone"] == "UTC"
    assert (
        conf["spark.sql.sources.partitionColumnTypeInference.enabled"] == "false"
        and conf["spark.ui.enabled"] == "false"
    )
    assert conf["spark.sql.shuffle.partitions"] == "4" and conf["spark.driver.bindAddress"] == "127.0.0.1"
    settings.SPARK_MASTER = "spark://spark-master:7077"
    settings.GANTRY_ANALYTICS = {
        **settings.GANTRY_ANALYTICS,
        "SHUFFLE_PARTITIONS": 16,
        "SPARK_CONF": {"spark.executor.memory": "2g"},
    }
    conf = spark_conf()
    assert (
        conf["spark.master"] == "spark://spark-master:7077" and "spark.driver.bindAddress" not in conf
    )  # executors call back
    assert conf["spark.sql.shuffle.partitions"] == "16" and conf["spark.executor.memory"] == "2g"


@pytest.mark.slow
def test_a_worker_samples_every_broker_into_the_lake(console_cluster, celery_worker, tmp_path):
    from analytics.tasks import metrics_sample_task

    lake = tmp_path / "worker-lake"
    celery_worker(queues="celery", env={"GANTRY_LAKE_DIR": str(lake)})
    metrics_sample_task.delay()
    deadline = time.monotonic() + 30
    while len(list((lake / "queue_samples").rglob("*.parquet"))) < 2:
        assert time.monotonic() < deadline, "no samples from the worker"
        time.sleep(0.1)
    names = sorted(p.name for p in (lake / "queue_samples").rglob("*.parquet"))
    assert len(names) == 2 and "-broker-a-" in names[0] + names[1] and "-broker-b-" in names[0] + names[1]
