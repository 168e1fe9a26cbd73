"""Frozen dataclasses of what the console owns (users, tokens, audit entries), for templates and
output serializers; no ORM object leaves the console's selectors and services."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class UserInfo:
    username: str
    role: str
    is_active: bool
    date_joined: datetime
    last_login: datetime | None
    active_tokens: int = 0


@dataclass(frozen=True)
class CreatedUser:
    user: UserInfo
    password: str | None  # the generated password, shown once; None when the admin chose one


@dataclass(frozen=True)
class TokenInfo:
    id: int
    username: str
    name: str
    prefix: str
    created_at: datetime
    created_by: str
    last_used_at: datetime | None
    revoked_at: datetime | None
    expires_at: datetime | None = None
    expired: bool = False  # expires_at had passed when this was read

    @property
    def active(self) -> bool:
        return self.revoked_at is None and not self.expired


@dataclass(frozen=True)
class CreatedToken:
    token: str  # the secret, shown once
    info: TokenInfo


@dataclass(frozen=True)
class AuditRecord:
    id: int
    created_at: datetime
    actor: str
    actor_role: str
    source: str
    ip: str | None
    action: str
    target_type: str
    target: str
    before: Any
    after: Any
    result: str
    reason: str
    request_id: str = ""  # the web request that made it (console.request_id)

    @property
    def before_items(self) -> tuple[AuditItem, ...]:
        """``before`` as readable ``key: value`` lines (the audit page's list), changed keys marked."""
        return _items(self.before, self.after)

    @property
    def after_items(self) -> tuple[AuditItem, ...]:
        return _items(self.after, self.before)


@dataclass(frozen=True)
class AuditItem:
    """One line of an audit entry's before or after: ``key: value``; ``changed`` when the other side differs."""

    key: str
    value: str
    changed: bool = False


def _items(value: Any, other: Any) -> tuple[AuditItem, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        return (AuditItem("", _value_text(value), value != other),)
    others = other if isinstance(other, dict) else {}
    return tuple(
        AuditItem(str(k), _value_text(v), isinstance(other, dict) and (k not in others or others[k] != v))
        for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
    )


def _value_text(value: Any) -> str:
    """A value as an operator reads it: text as is, lists comma-separated, nested objects ``k=v``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return ", ".join(_value_text(v) for v in value) if value else "(none)"
    if isinstance(value, dict):
        return (
            ", ".join(f"{k}={_value_text(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) or "(empty)"
        )
    return str(value)
