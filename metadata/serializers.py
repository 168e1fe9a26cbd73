"""The shapes of /api/v1/metadata: the export's query, the import's input (dry run and apply) and the plan.

The document itself (``metadata``) is RocketMQ's exportMetadata JSON; it is checked by
:func:`metadata.document.parse_document`, which names the bad field (``metadata.topicConfigTable.<name>.perm``).
"""

from __future__ import annotations

import json

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.errors import InvalidInput
from console.rest import ClusterOrBrokerInput, StrictCharField, StrictInputSerializer
from brokers.engine.common.perm import PERM_MAX, PERM_MIN
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS
from console.schema_examples import GROUP_NAME_PATTERN, TOPIC_NAME_PATTERN
from metadata.document import (
    FILTER_TYPES,
    GROUP_BOOLS,
    GROUP_RANGES,
    GROUPS,
    MAX_DOCUMENT_BYTES,
    MAX_OBJECTS,
    TOPICS,
    MetadataDocument,
    parse_document,
)

_TARGET = {"cluster": "every master of this cluster", "broker": "this broker (its master) only"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_TOPIC_SCHEMA = {  # topicName (the key again) is accepted too; it is left out here so a generated entry cannot contradict its key
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "readQueueNums": {**_INT, "minimum": MIN_QUEUE_NUMS, "maximum": MAX_QUEUE_NUMS},
        "writeQueueNums": {**_INT, "minimum": MIN_QUEUE_NUMS, "maximum": MAX_QUEUE_NUMS},
        "perm": {**_INT, "minimum": PERM_MIN, "maximum": PERM_MAX},
        "topicFilterType": {"enum": list(FILTER_TYPES)},
        "topicSysFlag": {**_INT, "minimum": 0, "maximum": 2**31 - 1},
        "order": _BOOL,
    },
}
_GROUP_SCHEMA = {  # groupName likewise
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **{p: _BOOL for p in GROUP_BOOLS},
        **{p: {**_INT, "minimum": lo, "maximum": hi} for p, (lo, hi) in GROUP_RANGES.items()},
    },
}
_DOCUMENT_SCHEMA = {
    "type": "object",
    "description": "RocketMQ's exportMetadata JSON: topicConfigTable and/or subscriptionGroupTable (name -> "
    "definition, RocketMQ's property names), exportTime; other keys are ignored",
    "anyOf": [{"required": [TOPICS]}, {"required": [GROUPS]}],
    "properties": {
        TOPICS: {
            "type": "object",
            "maxProperties": MAX_OBJECTS,
            "additionalProperties": _TOPIC_SCHEMA,
            "description": f"topic name (pattern {TOPIC_NAME_PATTERN}) -> its definition",
        },
        GROUPS: {
            "type": "object",
            "maxProperties": MAX_OBJECTS,
            "additionalProperties": _GROUP_SCHEMA,
            "description": f"group name (pattern {GROUP_NAME_PATTERN}) -> its definition",
        },
        "exportTime": {**_INT, "minimum": 0},
    },
}


class MetadataExportQuery(ClusterOrBrokerInput):
    cluster = serializers.CharField(
        required=False, help_text="the masters of this cluster only (merged like mqadmin exportMetadata -c)"
    )
    broker = serializers.CharField(required=False, help_text="this broker's tables only (mqadmin exportMetadata -b)")
    include_special = serializers.BooleanField(
        required=False, default=False, help_text="also retry (%RETRY%) and DLQ (%DLQ%) topics (mqadmin's -s)"
    )


@extend_schema_field(_DOCUMENT_SCHEMA)
class DocumentField(serializers.JSONField):
    """The document, bounded and checked; a refusal names the field below ``metadata``."""

    def to_internal_value(self, data) -> MetadataDocument:
        size = len(json.dumps(data, separators=(",", ":")).encode())
        if size > MAX_DOCUMENT_BYTES:
            raise serializers.ValidationError(f"the document is {size} bytes; the limit is {MAX_DOCUMENT_BYTES} bytes.")
        try:
            return parse_document(data)
        except InvalidInput as exc:  # "metadata" is the document itself; deeper fields go below it
            whole = exc.fields.pop("metadata", None)
            raise serializers.ValidationError(whole or exc.fields) from None


class MetadataImportInput(ClusterOrBrokerInput, StrictInputSerializer):
    """A dry run: the document and where it goes (a cluster, a broker, or the only cluster)."""

    cluster = StrictCharField(required=False, help_text=_TARGET["cluster"])
    broker = StrictCharField(required=False, help_text=_TARGET["broker"])
    metadata = DocumentField(help_text="RocketMQ's exportMetadata JSON")

    schema_rules = {"not": {"required": ["cluster", "broker"]}}


class MetadataApplyInput(MetadataImportInput):
    """The apply: the dry run's input and its plan_id (refused with 409 when the plan differs now)."""

    plan_id = StrictCharField(max_length=64, help_text="the plan_id of the dry run being applied")


class FieldChangeOutput(serializers.Serializer):
    broker = serializers.CharField()
    field = serializers.CharField(help_text="RocketMQ's property name")
    before = serializers.JSONField(help_text="null: the broker does not hold it yet")
    after = serializers.JSONField()


class ObjectChangeOutput(serializers.Serializer):
    kind = serializers.CharField(help_text="topic or group")
    name = serializers.CharField()
    action = serializers.CharField(help_text="create, update or unchanged")
    changes = FieldChangeOutput(many=True)
    notes = serializers.ListField(child=serializers.CharField())


class SkippedOutput(serializers.Serializer):
    kind = serializers.CharField(help_text="topic or group")
    name = serializers.CharField()
    reason = serializers.CharField()


class ImportPlanOutput(serializers.Serializer):
    target = serializers.CharField()
    brokers = serializers.ListField(child=serializers.CharField())
    plan_id = serializers.CharField(help_text="give it to apply: the plan applied is the plan shown")
    applied = serializers.SerializerMethodField(help_text="false: a dry run, nothing written")
    counts = serializers.SerializerMethodField()
    objects = ObjectChangeOutput(many=True)
    skipped = SkippedOutput(many=True)

    def get_applied(self, plan) -> bool:
        return bool(self.context.get("applied"))

    def get_counts(self, plan) -> dict[str, int]:
        return plan.counts
