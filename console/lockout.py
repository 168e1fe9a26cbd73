"""Failed-login lockout, for the console login and the API token endpoint alike, kept by django-axes.

django-axes counts failed logins per (username, client address) in its AccessAttempt table (its
authentication backend refuses while a lock is in force; its user_login_failed handler counts).
After ``GANTRY_LOGIN["MAX_FAILURES"]`` failures within ``GANTRY_LOGIN["LOCKOUT_MINUTES"]`` minutes
the pair is locked for that long after the last attempt: every attempt is refused, right password
or not, with a message that says how long. A successful login clears the count; failures older
than the lockout time no longer count.

The client address is :func:`console.actor.client_ip` (REMOTE_ADDR, or the address the trusted
proxies in front saw: GANTRY_TRUSTED_PROXY_COUNT), the same one the audit log records. So clients
behind one proxy are told apart, and one client's failures lock only its own attempts at that
username: other users, and the same user from elsewhere, still log in.

This module holds the policy axes reads at run time (``AXES_FAILURE_LIMIT``, ``AXES_COOLOFF_TIME``,
``AXES_LOCKOUT_CALLABLE``) and the lock as the two front doors show it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from console.actor import client_ip


@dataclass(frozen=True)
class LoginLock:
    """A lock in force on a username from an address."""

    username: str
    retry_after_s: int

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil(self.retry_after_s / 60))
        unit = "minute" if minutes == 1 else "minutes"
        return (
            f"Too many failed logins for this username from your address. "
            f"Login is locked; try again in {minutes} {unit}."
        )


def failure_limit(request: HttpRequest | None = None, credentials: dict | None = None) -> int:
    """AXES_FAILURE_LIMIT: failures in a row that lock (settings.GANTRY_LOGIN, read at each attempt)."""
    return int(settings.GANTRY_LOGIN["MAX_FAILURES"])


def lockout_time(request: HttpRequest | None = None) -> timedelta:
    """AXES_COOLOFF_TIME: how long a lock lasts after the last attempt, and how long failures count."""
    return timedelta(minutes=int(settings.GANTRY_LOGIN["LOCKOUT_MINUTES"]))


def lock_after_failed_login(request: HttpRequest, username: str) -> LoginLock | None:
    """The lock in force after ``authenticate()`` refused ``username`` on this request, or None.

    axes marks the request (``axes_locked_out``) when its backend refused because of a lock, or when
    this failure started one.
    """
    if not getattr(request, "axes_locked_out", False):
        return None
    last = (
        (
            AccessAttempt.objects.filter(username=username, ip_address=client_ip(request)).aggregate(
                last=Max("attempt_time")
            )["last"]
        )
        or timezone.now()
    )
    left = (last + lockout_time() - timezone.now()).total_seconds()
    return LoginLock(username=username, retry_after_s=max(1, math.ceil(left)))


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: keep the answer our own doors gave (they say 429 and how long);
    any other login form (Django's admin site) gets a plain 429."""
    if original_response is not None and original_response.status_code == 429:
        return original_response
    detail = "Too many failed logins for this username from your address. Login is locked; try again later."
    if request.path.startswith("/api/"):
        return JsonResponse({"status": 429, "code": "login_locked", "detail": detail}, status=429)
    return HttpResponse(detail, status=429, content_type="text/plain; charset=utf-8")
