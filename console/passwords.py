"""Passwords: a user changes its own, an admin sets another user's. Both are audited.

A changed password ends the user's other console sessions: Django keeps a hash of the password in
each session and signs out a session whose hash no longer matches (the front door that made the
change keeps its own session with ``update_session_auth_hash``). API tokens are a credential of
their own and keep working; revoke them on the tokens page or with DELETE /api/v1/tokens/{id}.

Refusals name the field (``current_password``, ``new_password``, ``new_password2``) and change
nothing; neither the audit log nor an error ever holds a password.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError

from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput, NotFound
from console.roles import Role

PASSWORD_MAX = 4096  # as the API's other password fields


def _user(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"user {username} does not exist")
    return user


def _checked_new(user, new_password: object, new_password2: object | None, field_name: str) -> str:
    """The new password when Django's validators (AUTH_PASSWORD_VALIDATORS) accept it."""
    if not isinstance(new_password, str) or not new_password:
        raise InvalidInput(field_name, "give the new password.")
    if len(new_password) > PASSWORD_MAX:
        raise InvalidInput(field_name, f"at most {PASSWORD_MAX} characters.")
    if new_password2 is not None and new_password2 != new_password:
        raise InvalidInput("new_password2", "the two new passwords differ; type the same one twice.")
    try:
        password_validation.validate_password(new_password, user)
    except ValidationError as exc:
        raise InvalidInput(field_name, " ".join(exc.messages)) from None
    return new_password


def password_change(
    *, actor: Actor, current_password: str, new_password: str, new_password2: str | None = None
) -> None:
    """The signed-in user ``actor`` changes its own password (the current one first; the new one
    twice when ``new_password2`` is given, as the console's form does)."""
    with audited(actor=actor, action="user.password_change", target_type="user", target=actor.username) as note:
        user = _user(actor.username)
        if not isinstance(current_password, str) or not user.check_password(current_password):
            raise InvalidInput("current_password", "this is not your current password.")
        password = _checked_new(user, new_password, new_password2, "new_password")
        if password == current_password:
            raise InvalidInput("new_password", "the new password is the current one; choose another.")
        user.set_password(password)
        user.save(update_fields=["password"])
        note.after = {"password": "changed", "other_sessions": "signed out"}


def password_reset(*, actor: Actor, username: str, new_password: str, new_password2: str | None = None) -> None:
    """An admin sets the password of ``username`` (its console sessions end; its API tokens stay)."""
    actor.require(Role.ADMIN)
    with audited(actor=actor, action="user.password_reset", target_type="user", target=username) as note:
        user = _user(username)
        user.set_password(_checked_new(user, new_password, new_password2, "new_password"))
        user.save(update_fields=["password"])
        note.after = {"password": "set by an admin", "sessions": "signed out"}
