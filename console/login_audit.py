"""Logins in the audit log: every login (console session or API token) and every failed attempt.

Django sends ``user_logged_in`` and ``user_login_failed`` (its credentials already stripped of the
password); these receivers turn them into audit entries ``auth.login`` (ok) and
``auth.login_failed`` (failed, with the reason: a wrong username or password, or the lock in
force). Only the username is kept. Connected in ConsoleConfig.ready().
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.http import HttpRequest

from console.actor import client_ip
from console.audit import record_access
from console.lockout import lock_after_failed_login
from console.roles import role_of


def _source(request: HttpRequest | None) -> str:
    return "api" if request is not None and request.path.startswith("/api/") else "console"


def _ip(request: HttpRequest | None) -> str | None:
    return client_ip(request) if request is not None else None


def audit_login(sender, request: HttpRequest | None = None, user=None, **kwargs) -> None:
    role = role_of(user) if user is not None else None
    record_access(
        username=user.get_username(),
        role=role.value if role is not None else "",
        source=_source(request),
        ip=_ip(request),
        action="auth.login",
        target_type="user",
        target=user.get_username(),
        ok=True,
    )


def audit_login_failed(sender, credentials: dict, request: HttpRequest | None = None, **kwargs) -> None:
    username = str(credentials.get(get_user_model().USERNAME_FIELD) or credentials.get("username") or "")
    lock = lock_after_failed_login(request, username) if request is not None and username else None
    reason = lock.message if lock is not None else "wrong username or password"
    record_access(
        username=username,
        role="",
        source=_source(request),
        ip=_ip(request),
        action="auth.login_failed",
        target_type="user",
        target=username,
        ok=False,
        reason=reason,
    )


def connect() -> None:
    """Connect the receivers (after axes' own, so a failure's lock is known when it is recorded)."""
    user_logged_in.connect(audit_login, dispatch_uid="gantry.audit_login")
    user_login_failed.connect(audit_login_failed, dispatch_uid="gantry.audit_login_failed")
