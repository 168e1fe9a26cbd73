"""The one admin client the Django side (views, services, tasks) talks to the tier through.

Built lazily from ``settings.MQ`` on first use (no I/O at import time), shared by threads: the
blocking client is thread-safe. :func:`run` runs a plan (:mod:`brokers.engine.client.plan`) on
its driver, so every gateway call shares connections, timeouts and name-server fail-over;
:func:`fanout_to_brokers` and :func:`reply_failure` are the two pieces the gateway's batched
plans are written with.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TypeVar

from django.conf import settings

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig, tls_config_from_settings
from console.errors import Unavailable

T = TypeVar("T")

_lock = threading.Lock()
_client: BlockingMQAdminClient | None = None


def mq_tls() -> TlsConfig | None:
    """The TLS settings of every client the Django side makes (MQ TLS_ENABLE, TLS_CA, ...); None: plain.
    ValueError (TlsConfigError) when they name files that do not exist or cannot be loaded."""
    mq = settings.MQ
    tls = tls_config_from_settings(mq.get("TLS_ENABLE"), mq.get("TLS_CA"), mq.get("TLS_CERT"), mq.get("TLS_KEY"),
                                   mq.get("TLS_VERIFY", True), mq.get("TLS_SERVER_NAME"))
    return tls.check() if tls is not None else None


def get_admin_client() -> BlockingMQAdminClient:
    """The shared client, signing with MQ ACCESS_KEY / SECRET_KEY when set (the ACL) and speaking TLS
    with MQ TLS_ENABLE; Unavailable (503) when NAMESRV_ADDR is not a usable address list, only one of
    the two keys is set, or the TLS files cannot be loaded."""
    global _client
    with _lock:
        if _client is None:
            try:
                _client = BlockingMQAdminClient(
                    settings.MQ["NAMESRV_ADDR"], timeout_s=settings.MQ["ADMIN_TIMEOUT_S"],
                    access_key=settings.MQ.get("ACCESS_KEY") or None, secret_key=settings.MQ.get("SECRET_KEY") or None,
                    tls=mq_tls(),
                )
            except ValueError as exc:
                raise Unavailable(f"NAMESRV_ADDR, MQ_ACCESS_KEY/MQ_SECRET_KEY or MQ_TLS_* is not usable: {exc}") from exc
        return _client


def reset_admin_client() -> None:
    """Drop the shared client (tests that point NAMESRV_ADDR elsewhere call this)."""
    global _client
    with _lock:
        if _client is not None:
            _client.close()
        _client = None


def run(plan: Plan[T]) -> T:
    """Run a plan on the shared admin client."""
    return get_admin_client().driver.run(plan)


def reply_failure(reply: Reply | RemotingError, request_code: int) -> RemotingError | None:
    """The error of one Fanout answer, or None when it succeeded."""
    if isinstance(reply, RemotingError):
        return reply
    try:
        check(reply, request_code=request_code)
    except RemotingError as exc:
        return exc
    return None


def fanout_to_brokers(code: int, addrs: Iterable[str], ext: dict[str, object] | None = None) -> Plan[dict[str, Reply | RemotingError]]:
    """One request ``code`` to each broker address at once (duplicates sent once): address -> answer."""
    addrs = tuple(dict.fromkeys(addrs))
    if not addrs:
        return {}
    replies = yield Fanout(tuple(Call(code, ext, addr=a) for a in addrs))
    return dict(zip(addrs, replies))
