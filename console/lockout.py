"""Failed-login lockout, for the console login and the API token endpoint alike.

Failures are counted per (username, client address) in the database. After
``GANTRY_LOGIN["MAX_FAILURES"]`` failures in a row the pair is locked for
``GANTRY_LOGIN["LOCKOUT_MINUTES"]`` minutes: every attempt is refused, right password or not,
with a message that says how long. A successful login clears the count; the count also starts
over once a lock has run out, and when the last failure is older than the lockout time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from console.models import LoginFailure


@dataclass(frozen=True)
class LoginLock:
    """A lock in force on a username from an address."""

    username: str
    retry_after_s: int

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.retry_after_s / 60))
        unit = "minute" if minutes == 1 else "minutes"
        return (f"Too many failed logins for this username from your address. "
                f"Login is locked; try again in {minutes} {unit}.")


class LoginLocked(Exception):
    def __init__(self, lock: LoginLock) -> None:
        super().__init__(lock.message)
        self.lock = lock


def _policy() -> tuple[int, timedelta]:
    conf = settings.GANTRY_LOGIN
    return int(conf["MAX_FAILURES"]), timedelta(minutes=int(conf["LOCKOUT_MINUTES"]))


def _key(username: str) -> str:
    return (username or "").strip().lower()[:150]


def current_lock(*, username: str, ip: str) -> LoginLock | None:
    """The lock in force for ``username`` from ``ip``, or None."""
    row = LoginFailure.objects.filter(username=_key(username), ip=ip).first()
    now = timezone.now()
    if row is None or row.locked_until is None or row.locked_until <= now:
        return None
    return LoginLock(username=row.username, retry_after_s=math.ceil((row.locked_until - now).total_seconds()))


def check_not_locked(*, username: str, ip: str) -> None:
    """Raise LoginLocked when a lock is in force."""
    lock = current_lock(username=username, ip=ip)
    if lock is not None:
        raise LoginLocked(lock)


def record_failure(*, username: str, ip: str) -> LoginLock | None:
    """Count a failed login; return the lock when this failure started one."""
    max_failures, lockout = _policy()
    now = timezone.now()
    with transaction.atomic():
        row, _ = LoginFailure.objects.select_for_update().get_or_create(username=_key(username), ip=ip)
        ran_out = row.locked_until is not None and row.locked_until <= now
        stale = row.locked_until is None and row.failures and row.last_failure_at < now - lockout
        if ran_out or stale:  # a lock that ran out, or failures long ago, start the count over
            row.failures, row.locked_until = 0, None
            row.save(update_fields=["failures", "locked_until"])
        LoginFailure.objects.filter(pk=row.pk).update(failures=F("failures") + 1, last_failure_at=now)
        row.refresh_from_db()
        if row.failures >= max_failures and row.locked_until is None:
            row.locked_until = now + lockout
            row.save(update_fields=["locked_until"])
            return LoginLock(username=row.username, retry_after_s=int(lockout.total_seconds()))
    return None


def clear_failures(*, username: str, ip: str) -> None:
    LoginFailure.objects.filter(username=_key(username), ip=ip).delete()
