"""The Celery plumbing: a real worker process takes a task from the test Redis and answers."""

from __future__ import annotations

import pytest

from console.errors import QueueUnavailable
from console.queueing import RedisLock, check_redis, submit
from console.request_id import request_id_scope
from console.tasks import ping_task

pytestmark = pytest.mark.slow


def test_a_real_worker_answers_a_task(celery_worker):
    celery_worker()
    result = ping_task.delay()
    assert result.get(timeout=30)["pong"] is True


def test_a_task_queued_by_a_request_logs_with_its_request_id(celery_worker):
    worker = celery_worker()
    with request_id_scope("req-celery-0001"):  # as console.request_id's middleware sets it for a web request
        result = ping_task.AsyncResult(submit(ping_task, kwargs={}))
    assert result.get(timeout=30)["request_id"] == "req-celery-0001"
    assert any("console.tasks req=req-celery-0001 pong" in line for line in worker.log().splitlines())
    assert ping_task.delay().get(timeout=30)["request_id"] is None  # outside a request: none


def test_submit_fails_fast_with_a_clear_reason_when_redis_is_down(celery_redis):
    celery_redis.stop()
    with pytest.raises(QueueUnavailable) as info:  # how fast: bench/latency_bench.py
        submit(ping_task, kwargs={})
    assert "unreachable" in str(info.value) and str(celery_redis.port) in str(info.value)
    celery_redis.start()
    check_redis()


def test_a_lock_is_held_by_one_owner_and_taken_over_by_the_same_owner(celery_redis):
    first = RedisLock("gantry:test-lock", "job-1", ttl_s=5)
    second = RedisLock("gantry:test-lock", "job-2", ttl_s=5)
    assert first.acquire()
    assert not second.acquire()
    assert RedisLock("gantry:test-lock", "job-1", ttl_s=5).acquire()  # a redelivered task of the same job
    assert not second.release()
    assert first.release()
    assert second.acquire()
