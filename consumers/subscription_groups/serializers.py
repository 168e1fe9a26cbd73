"""The shapes of /api/v1/subscription-groups: inputs (create, PUT, PATCH, delete, list filters) and outputs.

The settings' names, help and ranges are :data:`consumers.subscription_groups.selectors.SETTINGS` and
``RANGES``; the services check them again (a form or the API, the same refusal).
"""

from __future__ import annotations

from rest_framework import serializers

from console.query_filters import ChoiceSetField
from console.rest import (
    ClusterOrBrokerInput,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from console.schema_examples import GROUP_NAME_PATTERN
from consumers.subscription_groups.selectors import BOOL_SETTINGS, RANGES, SETTINGS
from consumers.subscription_groups.services import SubscriptionGroupSpec
from consumers.types import GROUP_KINDS


def _setting_field(name: str) -> serializers.Field:
    java, help_text = SETTINGS[name]
    if name in BOOL_SETTINGS:
        return StrictBooleanField(required=False, help_text=f"{java}: {help_text}")
    low, high = RANGES[name]
    return StrictIntegerField(required=False, min_value=low, max_value=high, help_text=f"{java}: {help_text}")


_TARGET_HELP = {"cluster": "every master of this cluster", "broker": "this broker (its master) only"}
_RANGE_RULES = {name: {"minimum": low, "maximum": high} for name, (low, high) in RANGES.items()}


class SubscriptionGroupSettingsInput(ClusterOrBrokerInput, StrictInputSerializer):
    """Every setting, each optional, and where to write (cluster or broker)."""

    cluster = StrictCharField(required=False, help_text=_TARGET_HELP["cluster"])
    broker = StrictCharField(required=False, help_text=_TARGET_HELP["broker"])
    consume_enable = _setting_field("consume_enable")
    consume_from_min_enable = _setting_field("consume_from_min_enable")
    consume_broadcast_enable = _setting_field("consume_broadcast_enable")
    retry_queue_nums = _setting_field("retry_queue_nums")
    retry_max_times = _setting_field("retry_max_times")
    broker_id = _setting_field("broker_id")
    which_broker_when_consume_slowly = _setting_field("which_broker_when_consume_slowly")
    notify_consumer_ids_changed_enable = _setting_field("notify_consumer_ids_changed_enable")

    replace = True  # settings left out take the defaults
    require_target = False
    schema_rules = {"not": {"required": ["cluster", "broker"]}, "properties": _RANGE_RULES}

    def validate(self, attrs: dict) -> dict:
        if self.require_target and "cluster" not in attrs and "broker" not in attrs:
            raise serializers.ValidationError({"cluster": ["give a cluster (every master of it) or a broker."]})
        return super().validate(attrs)

    def spec(self, name: str | None = None) -> SubscriptionGroupSpec:
        data = self.validated_data
        return SubscriptionGroupSpec(
            name or data["name"],
            data.get("cluster"),
            data.get("broker"),
            {k: v for k, v in data.items() if k in SETTINGS},
            self.replace,
        )


class SubscriptionGroupCreateInput(SubscriptionGroupSettingsInput):
    name = StrictCharField(trim_whitespace=False, allow_blank=True, help_text="the consumer group's name")

    require_target = True
    schema_rules = {
        "oneOf": [{"required": ["cluster"]}, {"required": ["broker"]}],
        "properties": {**_RANGE_RULES, "name": {"pattern": GROUP_NAME_PATTERN}},
    }


class SubscriptionGroupReplaceInput(SubscriptionGroupSettingsInput):
    """PUT: the settings left out take RocketMQ's defaults on every broker written."""


class SubscriptionGroupPatchInput(SubscriptionGroupSettingsInput):
    """PATCH: the settings left out keep each broker's current value."""

    replace = False
    schema_rules = {**SubscriptionGroupSettingsInput.schema_rules, "minProperties": 1}

    def validate(self, attrs: dict) -> dict:
        if not attrs:
            raise serializers.ValidationError(
                {"non_field_errors": ["nothing to change: give a setting, a cluster or a broker."]}
            )
        return super().validate(attrs)


class SubscriptionGroupDeleteQuery(ClusterOrBrokerInput):
    cluster = serializers.CharField(required=False, help_text="delete from every master of this cluster only")
    broker = serializers.CharField(required=False, help_text="delete from this broker only")
    remove_offsets = serializers.BooleanField(
        required=False,
        default=False,
        help_text="also drop the group's committed offsets there (members then start afresh)",
    )


class SubscriptionGroupListQuery(serializers.Serializer):
    search = serializers.CharField(required=False, allow_blank=True, max_length=255, help_text="a part of the name")
    kind = ChoiceSetField(choices=GROUP_KINDS, required=False)


class BrokerSubscriptionGroupOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    cluster = serializers.CharField()
    addr = serializers.CharField()
    consume_enable = serializers.BooleanField()
    consume_from_min_enable = serializers.BooleanField()
    consume_broadcast_enable = serializers.BooleanField()
    retry_queue_nums = serializers.IntegerField()
    retry_max_times = serializers.IntegerField()
    broker_id = serializers.IntegerField()
    which_broker_when_consume_slowly = serializers.IntegerField()
    notify_consumer_ids_changed_enable = serializers.BooleanField()


class SubscriptionGroupOutput(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=GROUP_KINDS)
    consume_enable = serializers.BooleanField(help_text="false when any broker's copy says so")
    uniform = serializers.BooleanField(help_text="every broker holds the same settings")
    brokers = BrokerSubscriptionGroupOutput(many=True)


class SubscriptionGroupDeletionOutput(serializers.Serializer):
    name = serializers.CharField()
    brokers = serializers.ListField(child=serializers.CharField(), help_text="deleted on")
    remove_offsets = serializers.BooleanField()
    remaining = serializers.ListField(child=serializers.CharField(), help_text="brokers that still hold the group")
