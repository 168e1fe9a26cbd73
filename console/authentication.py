"""API tokens: ``Authorization: Token <token>``, checked against the SHA-256 digests we keep.

A token lives settings.GANTRY_TOKEN_TTL_DAYS (90 days by default); an expired one is a 401 that
says so. Revoking ends it sooner.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions

from console.models import ApiToken

TOKEN_PREFIX = "gty_"  # makes a leaked token easy to recognise (secret scanners, logs)
TOKEN_BYTES = 32  # 256 bits of randomness
SHOWN_PREFIX_CHARS = 12  # "gty_" and 8 characters, enough to tell tokens apart in a list
LAST_USED_RESOLUTION = timedelta(minutes=1)  # at most one write per token per minute


def token_ttl() -> timedelta:
    """How long a new token lives: settings.GANTRY_TOKEN_TTL_DAYS (90 days by default)."""
    return timedelta(days=settings.GANTRY_TOKEN_TTL_DAYS)


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Authenticate ``Authorization: Token <token>``; ``request.auth`` is the ApiToken row."""

    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: use 'Authorization: Token <token>'.")
        try:
            token = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        row = ApiToken.objects.select_related("user").filter(digest=token_digest(token)).first()
        if row is None or row.revoked_at is not None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if not row.user.is_active:
            raise exceptions.AuthenticationFailed("The token's user is deactivated.")
        now = timezone.now()
        if row.expired(now):
            raise exceptions.AuthenticationFailed(
                f"This token expired at {row.expires_at:%Y-%m-%d %H:%M} UTC; create a new one (POST /api/v1/auth/token)."
            )
        if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        return row.user, row

    def authenticate_header(self, request) -> str:
        return self.keyword
