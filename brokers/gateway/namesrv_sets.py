"""Which tier (name-server set) the code running now talks to: several clusters in one console.

The console knows ``default`` (the tier of ``settings.MQ``: NAMESRV_ADDR, MQ_ACCESS_KEY, MQ_TLS_*),
first and always, then the sets an admin added (:class:`brokers.models.NamesrvSet`, in their order).
One of them is *current* for a web request or a Celery task (a context variable):

- a web request: ``?namesrv_set=NAME`` on any URL, else the console session's choice (the header's
  switcher stores it), else ``default`` (:class:`brokers.namesrv_set_scope.NamesrvSetMiddleware`);
- a Celery task: the set current when it was queued (console.queueing sends its name as the
  :data:`CELERY_HEADER` message header, console.celery makes it current again); beat's tasks: ``default``.

:func:`brokers.gateway.client.get_admin_client` gives the current set's client, so every gateway call,
page and API answer is scoped to it without passing it around. ``?namesrv_set=`` and not ``?cluster=``:
``cluster`` already names a RocketMQ cluster inside one tier (``DELETE /api/v1/topics/T?cluster=``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from brokers.models import NamesrvSet
from console import namesrv_scope
from console.namesrv_scope import CELERY_HEADER, DEFAULT, PARAM, scope

log = logging.getLogger(__name__)

__all__ = [
    "CELERY_HEADER",
    "DEFAULT",
    "NAME_RE",
    "PARAM",
    "SESSION_KEY",
    "Missing",
    "NamesrvTarget",
    "cache_prefix",
    "configured",
    "current",
    "current_name",
    "default_target",
    "is_default",
    "lookup",
    "scope",
]

SESSION_KEY = "gantry_namesrv_set"  # the console session's choice
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # safe in a URL, a header and a cache key


@dataclass(frozen=True)
class NamesrvTarget:
    """One tier: where its name servers are and how to sign and encrypt; the secret never in a repr."""

    name: str
    namesrv_addr: str
    access_key: str = ""
    secret_key: str = field(default="", repr=False)
    tls: bool = False
    timeout_s: float = 3.0

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT


@dataclass(frozen=True)
class Missing:
    """A set a task was queued under that is no longer configured: its calls fail, never run on another."""

    name: str


def default_target() -> NamesrvTarget:
    """settings.MQ's tier, read now (tests point settings.MQ elsewhere and the next call follows)."""
    mq = settings.MQ
    return NamesrvTarget(
        DEFAULT,
        mq["NAMESRV_ADDR"],
        mq.get("ACCESS_KEY") or "",
        mq.get("SECRET_KEY") or "",
        bool(mq.get("TLS_ENABLE")),
        float(mq["ADMIN_TIMEOUT_S"]),
    )


def _target(row: NamesrvSet) -> NamesrvTarget:
    return NamesrvTarget(
        row.name, row.namesrv_addr, row.access_key, row.secret_key, row.tls, float(settings.MQ["ADMIN_TIMEOUT_S"])
    )


def lookup(name: str) -> NamesrvTarget | None:
    """The set called ``name``, or None."""
    if name == DEFAULT:
        return default_target()
    row = NamesrvSet.objects.filter(name=name).first() if NAME_RE.fullmatch(name or "") else None
    return _target(row) if row is not None else None


def configured() -> list[NamesrvTarget]:
    """Every set the console knows, ``default`` first then the added ones in order (the health scan runs one per set)."""
    return [default_target(), *(_target(row) for row in NamesrvSet.objects.all())]


def each_set(work: Callable[[], dict], what: str) -> list[dict]:
    """``work()`` once per configured set, in its scope, ``namesrv_set`` added to each answer; a set whose
    work raises is logged and reported (``ok`` false, ``error``), and the others still run (beat's per-set
    health scan, samples and refreshes)."""
    out = []
    for target in configured():
        with scope(target):
            try:
                out.append({"namesrv_set": target.name, **work()})
            except Exception as exc:  # noqa: BLE001 -- one tier's failure (its name server down, a bug) must not starve the rest
                log.warning("%s of name-server set %s failed: %s", what, target.name, exc, exc_info=True)
                out.append({"namesrv_set": target.name, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return out


def current() -> NamesrvTarget | Missing:
    """The set this request or task runs against (``default`` outside any)."""
    chosen = namesrv_scope.get()
    if isinstance(chosen, str):  # a name from a task's header: resolved once, kept for the task's run
        chosen = None if chosen == DEFAULT else lookup(chosen) or Missing(chosen)
        namesrv_scope.set_current(chosen)
    if isinstance(chosen, (NamesrvTarget, Missing)) and chosen.name != DEFAULT:
        return chosen
    return default_target()


def current_name() -> str:
    return namesrv_scope.current_name()


def is_default() -> bool:
    """True when the current set is settings.MQ's (its dashboards' lake is LAKE_DIR itself, analytics.lake.lake_dir)."""
    return current_name() == DEFAULT


def cache_prefix() -> str:
    """A prefix for cache keys holding a tier's facts: "" for ``default`` (its keys as before), else ``ns:NAME:``."""
    name = current_name()
    return "" if name == DEFAULT else f"ns:{name}:"
