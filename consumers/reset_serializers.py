"""Inputs and outputs of a group's offset reset (GET the plan / POST apply groups/{name}/reset-offset)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.errors import InvalidInput
from console.rest import StrictCharField, StrictInputSerializer
from consumers.reset_target import RESET_TO, reset_target
from consumers.serializers import TimeField


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 2**63 - 1})
class WholeNumberField(serializers.Field):
    """A whole number 0 or more, as a JSON integer or (query strings) digits; checked by reset_target."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


class ResetOffsetInput(StrictInputSerializer):
    """Where to reset: ``to`` time (default; with ``timestamp``), now, earliest, latest, or offset (one
    queue: ``broker``, ``queue_id``, ``offset``). The validated data carry ``target`` (a ResetTarget)."""

    _QUEUE_FIELDS = ("broker", "queue_id", "offset")
    schema_rules = {
        "oneOf": [  # the combinations reset_target accepts
            {
                "required": ["timestamp"],
                "properties": {"to": {"enum": ["time"]}},
                "not": {"anyOf": [{"required": [f]} for f in _QUEUE_FIELDS]},
            },
            {
                "required": ["to"],
                "properties": {"to": {"enum": ["now", "earliest", "latest"]}},
                "not": {"anyOf": [{"required": [f]} for f in ("timestamp", *_QUEUE_FIELDS)]},
            },
            {
                "required": ["to", *_QUEUE_FIELDS],
                "properties": {"to": {"enum": ["offset"]}},
                "not": {"required": ["timestamp"]},
            },
        ]
    }

    topic = StrictCharField()
    to = serializers.ChoiceField(choices=RESET_TO, required=False, help_text="where the offsets go; default time")
    timestamp = TimeField(required=False, help_text="to=time: reset to the messages stored at this time")
    broker = StrictCharField(required=False, help_text="to=offset: the queue's broker")
    queue_id = WholeNumberField(required=False, help_text="to=offset: the queue's id")
    offset = WholeNumberField(required=False, help_text="to=offset: the queue's new offset (min to max offset)")

    def validate(self, attrs: dict) -> dict:
        try:
            target = reset_target(
                attrs.get("to"),
                timestamp=attrs.get("timestamp"),
                broker=attrs.get("broker"),
                queue_id=attrs.get("queue_id"),
                offset=attrs.get("offset"),
            )
        except InvalidInput as exc:
            raise serializers.ValidationError(exc.fields) from None
        return {"topic": attrs["topic"], "target": target}


class QueueResetOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    broker_offset = serializers.IntegerField()
    before = serializers.IntegerField(help_text="committed offset before; -1 none")
    after = serializers.IntegerField()
    change = serializers.IntegerField(help_text="messages consumed again (positive) or skipped (negative)")


class OffsetResetOutput(serializers.Serializer):
    group = serializers.CharField()
    topic = serializers.CharField()
    to = serializers.ChoiceField(choices=RESET_TO, source="target.to")
    target = serializers.CharField(source="target.label", help_text="where the offsets go, in words")
    timestamp_ms = serializers.IntegerField(allow_null=True, help_text="to=time or now: the time reset to; else null")
    time = serializers.DateTimeField(allow_null=True)
    mode = serializers.ChoiceField(choices=("online", "offline"))
    applied = serializers.BooleanField()
    blocked = serializers.CharField(help_text="why it cannot be applied now; empty when it can")
    queues = QueueResetOutput(many=True)
