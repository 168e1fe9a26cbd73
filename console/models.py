"""What the console itself owns: roles of users, API tokens, the audit log (failed-login counters
are django-axes' AccessAttempt, console.lockout).

Broker state is never stored here (DESIGN §1); the broker sightings of the overview live in
``brokers.models``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from console.roles import Role


class AccountRole(models.Model):
    """The role of one user (see :mod:`console.roles`)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="gantry_role")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


class ApiToken(models.Model):
    """An API token for scripts: only its SHA-256 digest is kept; the token is shown once; it
    expires (``expires_at``) and can be revoked before."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16)  # the first characters, to recognise a token in lists
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.CharField(max_length=150)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()  # settings.GANTRY_TOKEN_TTL_DAYS after creation

    class Meta:
        ordering = ["-created_at", "-id"]

    def expired(self, now=None) -> bool:
        return self.expires_at <= (now or timezone.now())

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.expired()

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class AuditEntry(models.Model):
    """One change made through the console or the API, or refused while being made.

    Append-only: rows are written by :func:`console.audit.record_audit` and never changed.
    """

    OK = "ok"
    FAILED = "failed"
    RESULTS = [(OK, "ok"), (FAILED, "failed")]

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(max_length=150, db_index=True)  # a username, kept if the user goes
    actor_role = models.CharField(max_length=16, blank=True)
    source = models.CharField(max_length=16)  # console, api, system
    ip = models.GenericIPAddressField(null=True, blank=True)
    action = models.CharField(max_length=64, db_index=True)  # <entity>.<verb>: topic.create
    target_type = models.CharField(max_length=32)  # topic, group, user, token, ...
    target = models.CharField(max_length=255, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    result = models.CharField(max_length=8, choices=RESULTS)
    reason = models.TextField(blank=True)
    # the web request that made the change (console.request_id; its X-Request-ID answer and log lines)
    request_id = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.target} {self.result}"


class UserPreference(models.Model):
    """One user's display choices: the time zone pages show times in and the console's language.

    Empty means "not chosen": times in UTC, the language from the session, cookie or the browser's
    Accept-Language (console.preferences). Storage and the REST API stay UTC whatever is chosen.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="gantry_preference")
    time_zone = models.CharField(max_length=64, blank=True)  # an IANA name (zoneinfo): Asia/Shanghai
    language = models.CharField(max_length=16, blank=True)  # a code of settings.LANGUAGES: en, zh-hans

    def __str__(self) -> str:
        return f"{self.user} ({self.time_zone or 'UTC'}, {self.language or 'browser'})"
