"""Writes to what the console owns: users, their roles, API tokens. Each is audited.

Admins manage every user and token; any user may create an API token for itself (the token
endpoint does this after checking the password) and revoke its own tokens. No change may leave
the console without an active admin.
"""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from console.actor import Actor
from console.audit import audited
from console.authentication import SHOWN_PREFIX_CHARS, new_token, token_digest, token_ttl
from console.errors import Conflict, Forbidden, InvalidInput, NotFound
from console.models import AccountRole, ApiToken
from console.records import CreatedToken, CreatedUser, TokenInfo, UserInfo
from console.roles import Role, assigned_role
from console.selectors import token_info, user_detail

USERNAME_MAX = 150
GENERATED_PASSWORD_BYTES = 18  # 24 URL-safe characters


def _get_user(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"user {username} does not exist")
    return user


def _active_admins(excluding_pk: int | None = None) -> int:
    users = get_user_model().objects.filter(is_active=True).select_related("gantry_role")
    return sum(1 for u in users if u.pk != excluding_pk and assigned_role(u) == Role.ADMIN)


def _set_role(user, role: Role) -> None:
    AccountRole.objects.update_or_create(user=user, defaults={"role": Role(role).value})


def _user_state(user) -> dict:
    return {"role": assigned_role(user).value, "is_active": user.is_active}


def user_create(*, actor: Actor, username: str, role: Role, password: str | None = None) -> CreatedUser:
    """Create a user with a role; without a password one is generated and returned once."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="user.create", target_type="user", target=username) as note:
        User = get_user_model()
        username = User.normalize_username(username)  # as create_user stores it (NFKC), so the answer finds the user
        try:
            User.username_validator(username)
        except ValidationError as exc:
            raise InvalidInput("username", exc.messages[0]) from None
        if not username or len(username) > USERNAME_MAX:
            raise InvalidInput("username", f"must be 1 to {USERNAME_MAX} characters.")
        if User.objects.filter(username__iexact=username).exists():
            raise Conflict(f"user {username} exists already")
        generated = password is None
        if generated:
            password = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES)
        try:
            password_validation.validate_password(password, User(username=username))
        except ValidationError as exc:
            raise InvalidInput("password", " ".join(exc.messages)) from None
        with transaction.atomic():
            user = User.objects.create_user(username=username, password=password)
            _set_role(user, role)
        note.after = _user_state(user)
    return CreatedUser(user_detail(username=username), password if generated else None)


def user_update(*, actor: Actor, username: str, role: Role | None = None, is_active: bool | None = None) -> UserInfo:
    """Set a user's role and/or activate or deactivate it (a deactivated user's tokens stop working)."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="user.update", target_type="user", target=username) as note:
        user = _get_user(username)
        note.before = _user_state(user)
        demoted = role is not None and Role(role) != Role.ADMIN
        if (demoted or is_active is False) and assigned_role(user) == Role.ADMIN and user.is_active:
            if _active_admins(excluding_pk=user.pk) == 0:
                raise Conflict("this would leave no active admin; make another user admin first")
        with transaction.atomic():
            if role is not None:
                _set_role(user, Role(role))
            if is_active is not None and user.is_active != is_active:
                user.is_active = is_active
                user.save(update_fields=["is_active"])
        user.refresh_from_db()
        note.after = _user_state(user)
    return user_detail(username=username)


def api_token_create(*, actor: Actor, username: str, name: str = "") -> CreatedToken:
    """Create an API token for ``username`` (admins: anyone; others: themselves). The secret is
    returned once; only its digest is kept."""
    if username != actor.username:
        actor.require(Role.ADMIN)
    with audited(actor=actor, action="token.create", target_type="token", target=username) as note:
        user = _get_user(username)
        if not user.is_active:
            raise InvalidInput("username", f"user {username} is deactivated.")
        token = new_token()
        now = timezone.now()
        row = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=token[:SHOWN_PREFIX_CHARS],
            digest=token_digest(token),
            created_by=actor.username,
            created_at=now,
            expires_at=now + token_ttl(),
        )
        info = token_info(row)
        note.after = {"id": info.id, "name": info.name, "prefix": info.prefix, "expires_at": info.expires_at}
    return CreatedToken(token, info)


def api_token_revoke(*, actor: Actor, token_id: int) -> TokenInfo:
    """Revoke a token (admins: any; others: their own). Revoking twice is not an error."""
    row = ApiToken.objects.select_related("user").filter(pk=token_id).first()
    if row is None:
        raise NotFound(f"API token {token_id} does not exist")
    if row.user.get_username() != actor.username:
        if not actor.role.allows(Role.ADMIN):
            raise Forbidden("only admins may revoke other users' tokens")
    with audited(actor=actor, action="token.revoke", target_type="token", target=row.user.get_username()) as note:
        note.before = {"id": row.pk, "prefix": row.prefix, "revoked_at": row.revoked_at}
        if row.revoked_at is None:
            row.revoked_at = timezone.now()
            row.save(update_fields=["revoked_at"])
        note.after = {"id": row.pk, "prefix": row.prefix, "revoked_at": row.revoked_at}
    return token_info(row)
