"""Handing work to Celery from a request, and the Redis locks tasks share.

:func:`submit` answers within about a second when Redis is down: it pings Redis with a short
timeout first, then publishes without Kombu's retry loop, and turns any failure into
:class:`console.errors.QueueUnavailable` (HTTP 503). The caller marks its job record failed
with that reason, so nothing is left "queued" that no worker will ever see.

:class:`RedisLock` is a lease: ``SET key owner NX PX ttl``; released only by its owner (a Lua
compare-and-delete), and expiring on its own if the holder dies, so a killed worker never
blocks the next run for longer than the lease.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from urllib.parse import urlsplit

import redis
from django.conf import settings

from console import namesrv_scope
from console.errors import QueueUnavailable
from console.request_id import CELERY_HEADER, current_request_id

log = logging.getLogger(__name__)

PING_TIMEOUT_S = 0.5  # with the publish's own 1 s connect timeout, a dead Redis answers in < 1 s overall


def redis_location(url: str | None = None) -> str:
    parts = urlsplit(url or settings.REDIS_URL)
    return f"{parts.hostname}:{parts.port or 6379}"


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=PING_TIMEOUT_S, socket_timeout=2.0)


def redis_client() -> redis.Redis:
    """A Redis client for the configured REDIS_URL (short timeouts; one per process)."""
    return _client(settings.REDIS_URL)


def check_redis() -> None:
    """Raise QueueUnavailable unless Redis answers PING within PING_TIMEOUT_S."""
    try:
        redis_client().ping()
    except (redis.RedisError, OSError) as exc:
        raise QueueUnavailable(
            f"Redis at {redis_location()} is unreachable, background work cannot be queued: {exc}"
        ) from exc


def submit(task, *, kwargs: dict, task_id: str | None = None, queue: str | None = None) -> str:
    """Queue ``task`` with JSON ``kwargs``; its task id. Fast failure when Redis is down. The task carries
    the request id and the current name-server set's name (console.namesrv_scope) in its headers."""
    check_redis()
    options: dict = {"retry": False}
    headers: dict[str, str] = {}
    rid = current_request_id()
    if rid:  # the task's log lines carry the id of the request that queued it (console.celery)
        headers[CELERY_HEADER] = rid
    if namesrv_scope.current_name() != namesrv_scope.DEFAULT:  # the task runs against the tier it was queued under
        headers[namesrv_scope.CELERY_HEADER] = namesrv_scope.current_name()
    if headers:
        options["headers"] = headers
    if task_id:
        options["task_id"] = task_id
    if queue:
        options["queue"] = queue
    try:
        return task.apply_async(kwargs=kwargs, **options).id
    except Exception as exc:  # kombu.exceptions.OperationalError, redis errors, socket errors
        raise QueueUnavailable(f"Redis at {redis_location()} refused the task: {exc}") from exc


_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
_EXTEND = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)


class RedisLock:
    """A lease on ``key`` held by ``owner`` (e.g. a job id) for ``ttl_s`` seconds.

    ``acquire()`` is True when this owner holds it afterwards, including when the same owner
    already held it (a redelivered task taking over its own job's lease).
    """

    def __init__(self, key: str, owner: str, ttl_s: float, client: redis.Redis | None = None) -> None:
        self.key = key
        self.owner = owner
        self.ttl_ms = int(ttl_s * 1000)
        self.client = client or redis_client()

    def acquire(self) -> bool:
        if self.client.set(self.key, self.owner, nx=True, px=self.ttl_ms):
            return True
        return self.holder() == self.owner and self.extend()

    def holder(self) -> str | None:
        value = self.client.get(self.key)
        return value.decode() if isinstance(value, bytes) else value

    def extend(self) -> bool:
        return bool(self.client.eval(_EXTEND, 1, self.key, self.owner, self.ttl_ms))

    def release(self) -> bool:
        try:
            return bool(self.client.eval(_RELEASE, 1, self.key, self.owner))
        except (redis.RedisError, OSError) as exc:  # the lease expires by itself
            log.warning("could not release lock %s: %s", self.key, exc)
            return False
