"""Input and output serializers of /api/v1/acl/... (never a secret in an output)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from brokers.engine.acl.plain_acl_config import SECRET_KEY_MIN_LENGTH
from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer

PERM_HELP = "DENY, PUB, SUB or PUB|SUB (the ACL core checks it: 400 naming the field)"
PERMS = ("DENY", "PUB", "SUB", "PUB|SUB")
_KEY = f"^[A-Za-z0-9_-]{{{SECRET_KEY_MIN_LENGTH},255}}$"  # the core's minimum length; a safe alphabet
_ADDRESS = r"(([1-9]?\d|1\d\d)\.){3}([1-9]?\d|1\d\d|\*)"  # a sample of remote_address.py's patterns: an IPv4 address or a.b.c.*
_RESOURCE_PERM = "^[A-Za-z0-9_%|-]{1,127}=(" + "|".join(p.replace("|", "\\|") for p in PERMS) + ")$"


class AccountInputSerializer(StrictInputSerializer):
    schema_rules: dict[str, Any] = {
        "required": ["access_key", "secret_key"],
        "properties": {  # what the ACL core checks (upsert_account)
            "access_key": {"pattern": _KEY},
            "secret_key": {"pattern": _KEY},
            "white_remote_address": {"pattern": f"^({_ADDRESS})?$"},
            "default_topic_perm": {"enum": list(PERMS)},
            "default_group_perm": {"enum": list(PERMS)},
            "topic_perms": {"items": {"type": "string", "pattern": _RESOURCE_PERM}},
            "group_perms": {"items": {"type": "string", "pattern": _RESOURCE_PERM}},
        },
    }

    access_key = StrictCharField(max_length=255)
    secret_key = StrictCharField(
        max_length=255,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="required to create; on an update, absent or empty keeps the secret",
    )
    white_remote_address = StrictCharField(max_length=255, required=False, allow_blank=True, default="")
    admin = StrictBooleanField(required=False, default=False)
    default_topic_perm = StrictCharField(max_length=16, required=False, default="DENY", help_text=PERM_HELP)
    default_group_perm = StrictCharField(max_length=16, required=False, default="DENY", help_text=PERM_HELP)
    topic_perms = serializers.ListField(
        child=StrictCharField(max_length=512), required=False, default=list, max_length=1000
    )
    group_perms = serializers.ListField(
        child=StrictCharField(max_length=512), required=False, default=list, max_length=1000
    )


class AccountUpdateSerializer(AccountInputSerializer):
    schema_rules: dict[str, Any] = {
        "properties": {
            **AccountInputSerializer.schema_rules["properties"],
            "secret_key": {"pattern": f"^({_KEY[1:-1]})?$"},
        }
    }  # empty: keep the secret
    access_key = StrictCharField(max_length=255, required=False)  # the URL names the account


class GlobalWhiteInputSerializer(StrictInputSerializer):
    schema_rules: dict[str, Any] = {
        "properties": {"addresses": {"items": {"type": "string", "pattern": f"^{_ADDRESS}$"}}}
    }

    addresses = serializers.ListField(child=StrictCharField(max_length=255), max_length=1000, allow_empty=True)


class AccountOutput(serializers.Serializer):
    access_key = serializers.CharField()
    white_remote_address = serializers.CharField()
    admin = serializers.BooleanField()
    default_topic_perm = serializers.CharField()
    default_group_perm = serializers.CharField()
    topic_perms = serializers.ListField(child=serializers.CharField())
    group_perms = serializers.ListField(child=serializers.CharField())


class BrokerAclOutput(serializers.Serializer):
    cluster = serializers.CharField()
    broker_name = serializers.CharField()
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    counter = serializers.IntegerField(allow_null=True, help_text="the ACL file's dataVersion counter")
    accounts = serializers.IntegerField(allow_null=True)
    reload_error = serializers.CharField()
    error = serializers.CharField()


class AclOverviewOutput(serializers.Serializer):
    accounts = AccountOutput(many=True)
    global_white_remote_addresses = serializers.ListField(child=serializers.CharField())
    brokers = BrokerAclOutput(many=True)
    consistent = serializers.BooleanField(help_text="every broker that answered holds the same accounts and addresses")
    source = serializers.CharField(help_text="the broker the accounts were read from")
