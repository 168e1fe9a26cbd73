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

    @property
    def before_text(self) -> str:
        return _json_text(self.before)

    @property
    def after_text(self) -> str:
        return _json_text(self.after)


def _json_text(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)
