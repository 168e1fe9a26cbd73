"""Serializers of the console's own API: the token endpoint, users, API tokens, the audit log."""

from __future__ import annotations

from rest_framework import serializers

from console.advice import KINDS
from console.query_filters import ChoiceFilterField
from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer
from console.roles import Role

# -- input -----------------------------------------------------------------------------------------


class TokenRequestInput(StrictInputSerializer):
    username = StrictCharField(trim_whitespace=False, max_length=150)
    password = StrictCharField(trim_whitespace=False, max_length=4096)
    name = StrictCharField(required=False, allow_blank=True, max_length=100, help_text="a label for the token")


def _password_min_length() -> int:
    """The MinimumLengthValidator's length in AUTH_PASSWORD_VALIDATORS (Django's default 8 without one)."""
    from django.conf import settings

    return next(
        (
            v.get("OPTIONS", {}).get("min_length", 8)
            for v in settings.AUTH_PASSWORD_VALIDATORS
            if v["NAME"].endswith(".MinimumLengthValidator")
        ),
        1,
    )


class UserCreateInput(StrictInputSerializer):
    # what user_create checks: Django's username validator (its ASCII part) and the password's minimum length
    schema_rules = {
        "properties": {"username": {"pattern": r"^[\w.@+-]{1,150}$"}, "password": {"minLength": _password_min_length()}}
    }

    username = StrictCharField(trim_whitespace=False, max_length=150)
    role = serializers.ChoiceField(choices=Role.choices, default=Role.VIEWER)
    password = StrictCharField(
        required=False, trim_whitespace=False, max_length=4096, help_text="left out: one is generated and returned once"
    )


class UserUpdateInput(StrictInputSerializer):
    schema_rules = {"minProperties": 1}  # validate(): something to change

    role = serializers.ChoiceField(choices=Role.choices, required=False)
    is_active = StrictBooleanField(required=False)

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError("nothing to change: give role and/or is_active.")
        return attrs


class PasswordChangeInput(StrictInputSerializer):
    schema_rules = {"properties": {"new_password": {"minLength": _password_min_length()}}}

    current_password = StrictCharField(
        trim_whitespace=False, max_length=4096, help_text="the password you sign in with now"
    )
    new_password = StrictCharField(
        trim_whitespace=False,
        max_length=4096,
        help_text="checked by the console's password validators (length, not common, not all digits, "
        "not like the username)",
    )


class PasswordResetInput(StrictInputSerializer):
    schema_rules = {"properties": {"new_password": {"minLength": _password_min_length()}}}

    new_password = StrictCharField(
        trim_whitespace=False,
        max_length=4096,
        help_text="the user's new password, checked by the console's password validators",
    )


class PasswordChangedOutput(serializers.Serializer):
    username = serializers.CharField()
    detail = serializers.CharField(
        help_text="what the change ended: the user's console sessions (API tokens keep working)"
    )


class TokenCreateInput(StrictInputSerializer):
    username = StrictCharField(trim_whitespace=False, max_length=150)
    name = StrictCharField(required=False, allow_blank=True, max_length=100)


class TokenListQuery(serializers.Serializer):
    username = serializers.CharField(required=False)
    active = serializers.BooleanField(required=False, allow_null=True, default=None)


class AuditQuery(serializers.Serializer):
    actor = serializers.CharField(required=False)
    action = serializers.CharField(required=False, help_text="a prefix: topic, topic.create, user, token")
    target = serializers.CharField(required=False, help_text="a part of the target's name")
    target_type = serializers.CharField(required=False)
    result = ChoiceFilterField(choices=["ok", "failed"], required=False)
    since = serializers.DateTimeField(
        required=False,
        help_text="date (YYYY-MM-DD) or ISO 8601 time, inclusive",
        input_formats=["iso-8601", "%Y-%m-%d"],
    )
    until = serializers.DateTimeField(
        required=False,
        help_text="date (YYYY-MM-DD) or ISO 8601 time, inclusive",
        input_formats=["iso-8601", "%Y-%m-%d"],
    )
    ordering = ChoiceFilterField(choices=["created_at", "-created_at"], required=False)

    def _date_only(self, name: str) -> bool:
        raw = self.initial_data.get(name, "") if hasattr(self, "initial_data") else ""
        return len(raw) == 10 and raw[4] == "-" and raw[7] == "-"

    def validate(self, attrs: dict) -> dict:
        for name in ("since", "until"):  # a bare date covers the whole day
            if name in attrs and self._date_only(name):
                attrs[name] = attrs[name].date()
        return attrs


# -- output ----------------------------------------------------------------------------------------


class UserOutput(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    is_active = serializers.BooleanField()
    date_joined = serializers.DateTimeField()
    last_login = serializers.DateTimeField(allow_null=True)
    active_tokens = serializers.IntegerField()


class CreatedUserOutput(UserOutput):
    password = serializers.CharField(allow_null=True, help_text="the generated password: shown this once")


class TokenOutput(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(
        help_text="after this the token is refused (401); settings.GANTRY_TOKEN_TTL_DAYS after creation"
    )
    active = serializers.BooleanField(help_text="neither revoked nor expired")


class CreatedTokenOutput(TokenOutput):
    token = serializers.CharField(help_text="send as 'Authorization: Token <token>'; shown this once")


class WhoAmIOutput(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    auth = serializers.ChoiceField(choices=["session", "token"])


class AuditOutput(serializers.Serializer):
    id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField()
    actor_role = serializers.CharField()
    source = serializers.CharField()
    ip = serializers.CharField(allow_null=True)
    action = serializers.CharField()
    target_type = serializers.CharField()
    target = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    result = serializers.ChoiceField(choices=["ok", "failed"])
    reason = serializers.CharField()
    request_id = serializers.CharField(
        allow_blank=True, help_text="the web request that made the change (its X-Request-ID)"
    )


class AdviceOutput(serializers.Serializer):
    """One finding of the queue-count advisor (console/advice.py)."""

    kind = serializers.ChoiceField(choices=list(KINDS))
    severity = serializers.ChoiceField(choices=["warning", "info"])
    subject = serializers.CharField(help_text="the broker, queue, topic or group the finding is about")
    finding = serializers.CharField()
    suggestion = serializers.CharField(help_text="the change it suggests")
    action = serializers.ChoiceField(
        choices=["edit", "shrink", ""],
        help_text="the console page that makes the change: topic edit, safe shrink, none",
    )


class AdviceListOutput(serializers.Serializer):
    name = serializers.CharField(help_text="the topic or group")
    advice = AdviceOutput(many=True, help_text="every finding, most serious first; empty: nothing to change")
