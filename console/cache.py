"""Django's Redis cache with JSON values: nothing read from Redis is ever unpickled.

Django's RedisCache pickles values, and unpickling runs code: anyone who can write a key in the
Redis that Celery shares (a worker, a script with the URL) could make the web process run
anything on its next cache read. Here values are JSON (the cache holds figures and lists:
brokers.gateway.overview's topic counts), and a value that is not JSON, a pickle included, is
a miss: logged, never executed.

``settings.CACHES`` names :class:`JSONRedisCache` when REDIS_URL is set.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

log = logging.getLogger(__name__)


class UndecodableValue(ValueError):
    """A cached value that is not this serializer's JSON."""


class JSONSerializer:
    """Values as compact JSON (integers too: INCR works on their digits)."""

    def dumps(self, obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode("utf-8")

    def loads(self, data: bytes | str | int) -> Any:
        if isinstance(data, int):
            return data
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise UndecodableValue(f"not a JSON cache value ({len(data)} bytes)") from exc


class JSONRedisCacheClient(RedisCacheClient):
    """RedisCacheClient with :class:`JSONSerializer`; a value that is not JSON reads as a miss."""

    def __init__(self, servers, serializer=None, **options) -> None:
        super().__init__(servers, serializer=serializer or JSONSerializer, **options)

    def get(self, key, default):
        try:
            return super().get(key, default)
        except UndecodableValue as exc:
            log.warning("cache key %r: %s; treated as a miss", key, exc)
            return default

    def get_many(self, keys):
        client = self.get_client(None)
        out = {}
        for key, raw in zip(keys, client.mget(keys)):
            if raw is None:
                continue
            try:
                out[key] = self._serializer.loads(raw)
            except UndecodableValue as exc:
                log.warning("cache key %r: %s; treated as a miss", key, exc)
        return out


class JSONRedisCache(RedisCache):
    """Django's RedisCache whose values are JSON (see the module's docstring)."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = JSONRedisCacheClient
