"""Redis shared with Celery: the cache never unpickles (console.cache), the private redis-server
has a password (console.redis_server), Celery's remote control is off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from console.redis_server import private_redis_password, private_redis_url, redis_argv, start_redis
from tests.fixtures.ports import free_port

ROOT = Path(__file__).resolve().parents[2]

# Run with the project's settings and REDIS_URL set (as make run's processes are): write a value
# through the cache, overwrite its key by hand with a pickle that would create a file, read it back.
READ_A_PLANTED_PICKLE = r"""
import os, pickle, sys
import django
django.setup()
import redis
from django.core.cache import cache, caches
from django.conf import settings
if sys.argv[2] == "stock":  # Django's own RedisCache: shows the trick works where values are pickles
    from django.core.cache.backends.redis import RedisCache
    cache = RedisCache(os.environ["REDIS_URL"], {"KEY_PREFIX": "gantry-cache"})
cache.set("overview:topic-counts", [3, 12], 60)
assert cache.get("overview:topic-counts") == [3, 12]

class Plant:
    def __reduce__(self):
        return (exec, ("open(%r, 'w').write('code ran')" % sys.argv[1],))

redis.Redis.from_url(os.environ["REDIS_URL"]).set(cache.make_and_validate_key("overview:topic-counts"), pickle.dumps(Plant()))
print("read:", repr(cache.get("overview:topic-counts", "MISS")), repr(cache.get_many(["overview:topic-counts"])))
"""


def _read_planted(redis_url: str, marker: Path, backend: str) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "REDIS_URL": redis_url}
    done = subprocess.run(
        [sys.executable, "-c", READ_A_PLANTED_PICKLE, str(marker), backend],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout + done.stderr


def test_a_pickle_planted_in_the_cache_key_is_a_miss_and_never_runs(celery_redis, tmp_path) -> None:
    marker = tmp_path / "planted"
    out = _read_planted(celery_redis.url, marker, "settings")
    assert "read: 'MISS' {}" in out, out
    assert not marker.exists()
    # the same plant against Django's stock RedisCache runs its code: the trick is real
    out = _read_planted(celery_redis.url, marker, "stock")
    assert marker.exists() and marker.read_text() == "code ran", out


def test_the_private_redis_server_wants_its_generated_password(tmp_path) -> None:
    var = tmp_path / "var"
    password = private_redis_password(var)
    assert private_redis_password(var) == password and len(password) >= 40  # made once, then read
    assert (var / "redis-password").stat().st_mode & 0o777 == 0o600
    argv = redis_argv(free_port(), var / "redis", password)
    assert not any(password in arg for arg in argv)  # not on the command line (ps shows it to everyone)
    assert (var / "redis" / "redis.conf").stat().st_mode & 0o777 == 0o600
    port = free_port()
    proc = start_redis(port, var / "redis", password)
    try:
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port).ping()
        assert redis.Redis.from_url(private_redis_url(var, port)).ping()
    finally:
        proc.terminate()
        proc.wait(10)


def test_celery_remote_control_is_off() -> None:
    from django.conf import settings

    from console.celery import app

    assert settings.CELERY_WORKER_ENABLE_REMOTE_CONTROL is False
    assert app.conf.worker_enable_remote_control is False
