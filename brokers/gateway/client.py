"""The one admin client the Django side (views, services, tasks) talks to the tier through.

One per name-server set (brokers.gateway.namesrv_sets: ``default`` is settings.MQ's), built lazily on
first use (no I/O at import time), shared by threads: the blocking client is thread-safe. :func:`run` runs a plan (:mod:`brokers.engine.client.plan`) on
its driver, so every gateway call shares connections, timeouts and name-server fail-over;
:func:`fanout_to_brokers` and :func:`reply_failure` are the two pieces the gateway's batched
plans are written with.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TypeVar

from django.conf import settings

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig, tls_config_from_settings
from brokers.gateway import namesrv_sets
from brokers.gateway.namesrv_sets import NamesrvTarget
from console.errors import Unavailable

T = TypeVar("T")

_lock = threading.Lock()
_clients: dict[str, tuple[NamesrvTarget, BlockingMQAdminClient]] = {}  # set name -> (what it was built for, client)


def mq_tls(enable: bool | None = None) -> TlsConfig | None:
    """The TLS settings of every client the Django side makes (MQ TLS_ENABLE, TLS_CA, ...); None: plain.
    ``enable`` overrides TLS_ENABLE (a name-server set's own TLS flag). ValueError (TlsConfigError)
    when they name files that do not exist or cannot be loaded."""
    mq = settings.MQ
    tls = tls_config_from_settings(
        mq.get("TLS_ENABLE") if enable is None else enable,
        mq.get("TLS_CA"),
        mq.get("TLS_CERT"),
        mq.get("TLS_KEY"),
        mq.get("TLS_VERIFY", True),
        mq.get("TLS_SERVER_NAME"),
    )
    return tls.check() if tls is not None else None


def get_admin_client() -> BlockingMQAdminClient:
    """The current name-server set's client (brokers.gateway.namesrv_sets; settings.MQ's outside a
    request or task that chose another), one per set, shared by threads: it signs with the set's
    ACCESS_KEY / SECRET_KEY when set (the ACL) and speaks TLS with its TLS flag. Unavailable (503) when
    the address list is not usable, only one of the two keys is set, the TLS files cannot be loaded,
    or the set a task was queued under has been removed."""
    target = namesrv_sets.current()
    if isinstance(target, namesrv_sets.Missing):
        raise Unavailable(f"name-server set {target.name!r} is no longer configured; nothing was run on another")
    with _lock:
        built = _clients.get(target.name)
        if built is not None and built[0] == target:
            return built[1]
        try:
            client = BlockingMQAdminClient(
                target.namesrv_addr,
                timeout_s=target.timeout_s,
                access_key=target.access_key or None,
                secret_key=target.secret_key or None,
                tls=mq_tls(target.tls),
            )
        except ValueError as exc:
            what = (
                "NAMESRV_ADDR, MQ_ACCESS_KEY/MQ_SECRET_KEY or MQ_TLS_*"
                if target.is_default
                else f"name-server set {target.name!r}"
            )
            raise Unavailable(f"{what} is not usable: {exc}") from exc
        if built is not None:  # its set was edited: the old client goes
            built[1].close()
        _clients[target.name] = (target, client)
        return client


def forget_admin_client(name: str) -> None:
    """Close the client of set ``name`` (edited or removed: the next call builds one from what it is now)."""
    with _lock:
        built = _clients.pop(name, None)
    if built is not None:
        built[1].close()


def reset_admin_client() -> None:
    """Drop every shared client (tests that point NAMESRV_ADDR elsewhere call this)."""
    with _lock:
        for _, client in _clients.values():
            client.close()
        _clients.clear()


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


def answered(reply: Reply | RemotingError, request_code: int) -> Reply | RemotingError:
    """``reply`` when it succeeded, else its error (:func:`reply_failure`): one value a type check narrows."""
    error = reply_failure(reply, request_code)
    return reply if error is None else error


def fanout_to_brokers(
    code: int, addrs: Iterable[str], ext: Mapping[str, object] | None = None
) -> Plan[dict[str, Reply | RemotingError]]:
    """One request ``code`` to each broker address at once (duplicates sent once): address -> answer."""
    addrs = tuple(dict.fromkeys(addrs))
    if not addrs:
        return {}
    replies = yield Fanout(tuple(Call(code, ext, addr=a) for a in addrs))
    return dict(zip(addrs, replies))
