"""Reads of users, API tokens and the audit log, as frozen dataclasses.

Long lists come as :class:`RecordSequence`: a lazy sequence over a queryset that turns only
the rows of the requested page into dataclasses (Django's and DRF's paginators slice it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime, time
from typing import Any, Generic, TypeVar

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from console.errors import NotFound
from console.models import ApiToken, AuditEntry
from console.records import AuditRecord, TokenInfo, UserInfo
from console.roles import assigned_role

R = TypeVar("R")


class RecordSequence(Sequence, Generic[R]):
    """A queryset seen as a sequence of dataclasses, converted a slice at a time."""

    def __init__(self, queryset: QuerySet, convert: Callable[[Any], R]) -> None:
        self.queryset = queryset
        self.convert = convert

    def count(self) -> int:  # type: ignore[override]  # what Django's Paginator calls
        return self.queryset.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.convert(row) for row in self.queryset[index]]
        return self.convert(self.queryset[index])


def user_info(user) -> UserInfo:
    return UserInfo(
        username=user.get_username(),
        role=assigned_role(user).value,
        is_active=user.is_active,
        date_joined=user.date_joined,
        last_login=user.last_login,
        active_tokens=getattr(user, "active_tokens", 0),
    )


def _users() -> QuerySet:
    return (
        get_user_model()
        .objects.select_related("gantry_role")
        .annotate(active_tokens=Count("api_tokens", filter=_active_tokens("api_tokens__")))
    )


def user_list() -> list[UserInfo]:
    return [user_info(u) for u in _users().order_by("username")]


def user_detail(*, username: str) -> UserInfo:
    user = _users().filter(username=username).first()
    if user is None:
        raise NotFound(f"user {username} does not exist")
    return user_info(user)


def token_info(token: ApiToken) -> TokenInfo:
    return TokenInfo(
        token.pk,
        token.user.get_username(),
        token.name,
        token.prefix,
        token.created_at,
        token.created_by,
        token.last_used_at,
        token.revoked_at,
        token.expires_at,
        token.expired(),
    )


def _active_tokens(prefix: str = "") -> Q:
    """Tokens neither revoked nor expired (``prefix``: the relation's path, e.g. ``api_tokens__``)."""
    return Q(**{f"{prefix}revoked_at__isnull": True, f"{prefix}expires_at__gt": timezone.now()})


def token_list(*, username: str | None = None, active: bool | None = None) -> RecordSequence[TokenInfo]:
    qs = ApiToken.objects.select_related("user").order_by("-created_at", "-id")
    if username:
        qs = qs.filter(user__username=username)
    if active is not None:
        qs = qs.filter(_active_tokens()) if active else qs.exclude(_active_tokens())
    return RecordSequence(qs, token_info)


def audit_record(entry: AuditEntry) -> AuditRecord:
    return AuditRecord(
        entry.pk,
        entry.created_at,
        entry.actor,
        entry.actor_role,
        entry.source,
        entry.ip,
        entry.action,
        entry.target_type,
        entry.target,
        entry.before,
        entry.after,
        entry.result,
        entry.reason,
        entry.request_id,
    )


def _day_bound(value: date | datetime, end: bool) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value)
    return timezone.make_aware(datetime.combine(value, time.max if end else time.min))


def audit_list(
    *,
    actor: str = "",
    action: str = "",
    target: str = "",
    target_type: str = "",
    result: str = "",
    since: date | datetime | None = None,
    until: date | datetime | None = None,
    oldest_first: bool = False,
) -> RecordSequence[AuditRecord]:
    """Audit entries, newest first: ``actor`` exact, ``action`` a prefix (``topic`` or ``topic.create``),
    ``target`` a part of the name (all three ignore case, on SQLite and PostgreSQL alike),
    ``since``/``until`` dates (inclusive) or times."""
    qs = AuditEntry.objects.all()
    if actor:
        qs = qs.filter(actor__iexact=actor)
    if action:
        qs = qs.filter(action__istartswith=action)  # case-insensitive on PostgreSQL too, as SQLite's LIKE is
    if target:
        qs = qs.filter(target__icontains=target)
    if target_type:
        qs = qs.filter(target_type=target_type)
    if result:
        qs = qs.filter(result=result)
    if since:
        qs = qs.filter(created_at__gte=_day_bound(since, end=False))
    if until:
        qs = qs.filter(created_at__lte=_day_bound(until, end=True))
    qs = qs.order_by("created_at", "id") if oldest_first else qs.order_by("-created_at", "-id")
    return RecordSequence(qs, audit_record)


def dependencies_ready() -> dict[str, bool]:
    """Whether each dependency a web request needs answers now: ``{"database": True}`` (the readiness probe).

    The database: a connection (re)opened if it was lost, and ``SELECT 1``. Redis is not asked: only
    requests that queue work need it, and they answer 503 themselves when it is down (console.queueing)."""
    return {"database": _database_answers()}


def _database_answers() -> bool:
    from django.core.exceptions import ImproperlyConfigured
    from django.db import DatabaseError, connection

    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except (DatabaseError, ImproperlyConfigured):  # unreachable, or a setting the backend refuses: not ready either way
        connection.close_if_unusable_or_obsolete()
        return False
    return True
