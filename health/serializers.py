"""Shapes of /api/v1/alert-rules and /api/v1/alert-events (health.api)."""

from __future__ import annotations

from rest_framework import serializers

from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer, StrictIntegerField
from console.schema_examples import EXAMPLE_GROUP, GROUP_NAME_PATTERN
from health.models import DISK_ABOVE, FIRING, KINDS, RESOLVED
from health.services import EVERY_GROUP_KINDS, MAX_EMAILS, MAX_FOR_MINUTES, MAX_SILENCE_MINUTES, MAX_THRESHOLD

WEBHOOK_PATTERN = r"^(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[!-~]*)?)?$"


class StrictFloatField(serializers.FloatField):
    """A JSON number (no strings or booleans)."""

    default_error_messages = {"invalid": "must be a number."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


class AlertRuleInput(StrictInputSerializer):
    """A rule: ``kind`` of condition on ``target`` (a consumer group that exists, or empty for every group with
    lag_growing and no_consumer_online; for topic kinds a topic; for broker kinds a broker name or empty for every
    broker), ``threshold`` (messages; disk_above: the used ratio 0..1), held ``for_minutes`` before it fires
    (lag_growing, dlq_growing: the window), sent to ``webhook_url`` and/or ``emails`` (neither: the overview and
    the history only)."""

    schema_rules = {
        "oneOf": [
            {
                "properties": {
                    "kind": {"enum": [DISK_ABOVE]},
                    "threshold": {"minimum": 0.01, "maximum": 0.99},
                },  # the service takes (0, 1)
                "required": ["threshold"],
            },
            {"properties": {"kind": {"enum": ["broker_expired", "slave_disconnected", *EVERY_GROUP_KINDS]}}},
            {
                "properties": {
                    "kind": {
                        "enum": [
                            k
                            for k in KINDS
                            if k not in (DISK_ABOVE, "broker_expired", "slave_disconnected", *EVERY_GROUP_KINDS)
                        ]
                    },
                    "target": {"minLength": 1},
                },
                "required": ["target"],
            },
        ],
        "properties": {
            "webhook_url": {"pattern": WEBHOOK_PATTERN, "example": "https://chat.example.com/hooks/gantry"},
            "target": {"pattern": f"^$|{GROUP_NAME_PATTERN}", "example": EXAMPLE_GROUP},
            "threshold": {"example": 1000},
        },
    }

    name = StrictCharField(max_length=100, help_text="a label", default="")
    kind = serializers.ChoiceField(choices=KINDS)
    target = StrictCharField(max_length=255, required=False, allow_blank=True, default="")
    threshold = StrictFloatField(required=False, default=0.0, min_value=0, max_value=MAX_THRESHOLD)
    for_minutes = StrictIntegerField(required=False, default=0, min_value=0, max_value=MAX_FOR_MINUTES)
    webhook_url = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")
    emails = serializers.ListField(child=serializers.EmailField(), required=False, default=list, max_length=MAX_EMAILS)
    enabled = StrictBooleanField(required=False, default=True)
    namesrv_set = StrictCharField(
        max_length=64,
        required=False,
        help_text="the name-server set (cluster) whose health scan evaluates the rule; default: the request's set",
    )


class SilenceInput(StrictInputSerializer):
    minutes = StrictIntegerField(min_value=0, max_value=MAX_SILENCE_MINUTES, help_text="0 ends the silence")


class EnableInput(StrictInputSerializer):
    enabled = StrictBooleanField(help_text="false: the rule is not evaluated")


class AlertRuleOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    namesrv_set = serializers.CharField()
    kind = serializers.ChoiceField(choices=KINDS)
    target = serializers.CharField()
    threshold = serializers.FloatField()
    for_minutes = serializers.IntegerField()
    webhook_url = serializers.CharField()
    emails = serializers.ListField(child=serializers.CharField())
    enabled = serializers.BooleanField()
    builtin = serializers.CharField(
        help_text="a default rule's key (edit, silence or disable it; it is not deleted), else empty"
    )
    silenced_until = serializers.DateTimeField(allow_null=True)
    silenced_by = serializers.CharField()
    firing = serializers.BooleanField()
    pending_since = serializers.DateTimeField(allow_null=True)
    last_value = serializers.FloatField(allow_null=True)
    last_message = serializers.CharField(help_text="what the last evaluation read")
    last_evaluated_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()


class DeliveryOutput(serializers.Serializer):
    channel = serializers.CharField()
    to = serializers.CharField()
    ok = serializers.BooleanField()
    detail = serializers.CharField()
    attempts = serializers.IntegerField()


class AlertEventOutput(serializers.Serializer):
    id = serializers.IntegerField()
    rule = serializers.IntegerField(source="rule_id", allow_null=True)
    rule_name = serializers.CharField()
    kind = serializers.CharField()
    target = serializers.CharField()
    state = serializers.ChoiceField(choices=[FIRING, RESOLVED])
    value = serializers.FloatField(allow_null=True)
    message = serializers.CharField()
    created_at = serializers.DateTimeField()
    notified = serializers.BooleanField()
    delivery = DeliveryOutput(many=True)
    acked_by = serializers.CharField()
    acked_at = serializers.DateTimeField(allow_null=True)


class AlertEventQuery(serializers.Serializer):
    """``?rule=<id>&state=firing|resolved`` (``page`` and ``page_size`` page the answer)."""

    rule = serializers.IntegerField(required=False, min_value=1, max_value=10**12, help_text="a rule's id")
    state = serializers.ChoiceField(choices=[FIRING, RESOLVED], required=False)
