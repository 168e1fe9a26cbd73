"""Input and output serializers of /api/v1/namesrv-sets (never a secret key in an output)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from brokers.namesrv_sets.services import MAX_POSITION
from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer, StrictIntegerField

_NAME = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_PORT = r"([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])"  # 1 to 65535
_ADDRS = (
    rf"^[^\s;,]+:{_PORT}(;[^\s;,]+:{_PORT})*$"  # host:port;host:port (the service also takes spaces and a trailing ;)
)


class NamesrvSetUpdateSerializer(StrictInputSerializer):
    schema_rules: dict[str, Any] = {"properties": {"namesrv_addr": {"pattern": _ADDRS}}}

    namesrv_addr = StrictCharField(
        max_length=1000, help_text="host:port;host:port, as NAMESRV_ADDR (400 naming the field)"
    )
    access_key = StrictCharField(
        max_length=255,
        required=False,
        allow_blank=True,
        default="",
        help_text="the ACL account to sign with; empty: unsigned",
    )
    secret_key = StrictCharField(
        max_length=255,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        help_text="never shown back; on an update, empty keeps the stored one for the same access key",
    )
    tls = StrictBooleanField(
        required=False, default=False, help_text="TLS with settings.MQ's TLS_CA / TLS_CERT / TLS_KEY"
    )
    position = StrictIntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=MAX_POSITION,
        help_text="the order in the switcher after default (lower first)",
    )


class NamesrvSetInputSerializer(NamesrvSetUpdateSerializer):
    schema_rules: dict[str, Any] = {
        "required": ["name", "namesrv_addr"],
        "properties": {"name": {"pattern": _NAME, "not": {"enum": ["default"]}}, "namesrv_addr": {"pattern": _ADDRS}},
    }

    name = StrictCharField(max_length=64, help_text="shown in the switcher and given as ?namesrv_set=NAME")


class NamesrvSetOutput(serializers.Serializer):
    name = serializers.CharField()
    namesrv_addr = serializers.CharField()
    access_key = serializers.CharField()
    has_secret_key = serializers.BooleanField()
    tls = serializers.BooleanField()
    position = serializers.IntegerField()
    default = serializers.BooleanField(help_text="settings.MQ's tier: first, changed in the environment only")
