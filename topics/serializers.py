"""Topic API serializers: inputs (strict: unknown fields, wrong types and bad values are
refused with the field named) build TopicSpec; outputs render the selectors' dataclasses.

Shapes scripts rely on::

    {"name": "Orders", "cluster": "DefaultCluster", "read_queue_nums": 8, "write_queue_nums": 8, "perm": 6}
    {"name": "Orders", "brokers": {"broker-a": {"read_queue_nums": 8, "write_queue_nums": 8, "perm": 6},
                                   "broker-b": {"write_queue_nums": 4}}, "perm": 6}

Values may stand at the top level or per broker (per broker wins); counts are 0..1024
(default 8), perm 0..7 (default 6). ``message_type`` (RocketMQ 5's ``message.type`` attribute: NORMAL,
FIFO, DELAY or TRANSACTION) applies to every broker written to; left out, a new topic is NORMAL and an
existing one keeps its type.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.errors import InvalidInput
from console.query_filters import ChoiceSetField
from console.schema_examples import TOPIC_NAME_PATTERN
from console.rest import StrictCharField, StrictInputSerializer, StrictIntegerField
from console.times import TIME_SCHEMA, parse_time_ms
from brokers.engine.common.perm import PERM_MAX, PERM_MIN
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS
from topics.rules import (
    DEFAULT_PERM,
    DEFAULT_QUEUE_NUMS,
    MESSAGE_TYPES,
    validate_new_topic_name,
    validate_perm,
    validate_queue_nums,
    validate_topic_name,
)
from topics.types import TOPIC_TYPES, QueueSpec, TopicSpec

# -- input -----------------------------------------------------------------------------------------


def _count_field() -> StrictIntegerField:
    return StrictIntegerField(
        required=False, validators=[validate_queue_nums], help_text=f"{MIN_QUEUE_NUMS}..{MAX_QUEUE_NUMS}, default 8"
    )


_COUNT_RANGE = {"minimum": MIN_QUEUE_NUMS, "maximum": MAX_QUEUE_NUMS}  # validate_queue_nums


class QueueCountsInput(StrictInputSerializer):
    schema_rules: dict[str, Any] = {
        "properties": {
            "read_queue_nums": _COUNT_RANGE,
            "write_queue_nums": _COUNT_RANGE,
            "perm": {"minimum": PERM_MIN, "maximum": PERM_MAX},
        }
    }

    read_queue_nums = _count_field()
    write_queue_nums = _count_field()
    perm = StrictIntegerField(
        required=False, validators=[validate_perm], help_text="0..7: 4 read, 2 write, 6 both (default)"
    )


class TopicWriteInput(QueueCountsInput):
    """The fields of create, PUT and PATCH; the subclasses say which are required."""

    name = StrictCharField(trim_whitespace=False, allow_blank=True)
    cluster = StrictCharField(
        required=False, trim_whitespace=False, help_text="cluster mode: every master of this cluster"
    )
    brokers = serializers.DictField(
        child=QueueCountsInput(),
        required=False,
        allow_empty=False,
        help_text="broker mode: broker name -> counts and perm",
    )
    message_type = serializers.ChoiceField(
        choices=MESSAGE_TYPES,
        required=False,
        error_messages={"invalid_choice": f'must be one of {", ".join(MESSAGE_TYPES)}, got "{{input}}".'},
        help_text="RocketMQ 5's message.type: what 5.x producers may send (left out: NORMAL for a new topic, unchanged otherwise)",
    )

    require_target = True  # cluster or brokers must be given
    schema_rules: dict[str, Any] = {
        "oneOf": [{"required": ["cluster"]}, {"required": ["brokers"]}],
        "properties": {
            **QueueCountsInput.schema_rules["properties"],
            "brokers": {"minProperties": 1},
            "name": {"pattern": TOPIC_NAME_PATTERN},
        },
    }
    fill_defaults = True  # values left out take the defaults (create, PUT); PATCH keeps current ones
    name_rule = staticmethod(validate_topic_name)

    def validate_name(self, value: str) -> str:
        return self.name_rule(value)  # here, not as a field validator, so "" gets the rule's message too

    def validate(self, attrs: dict) -> dict:
        if "cluster" in attrs and "brokers" in attrs:
            raise serializers.ValidationError(
                {"brokers": ["give either cluster (cluster mode) or brokers (broker mode), not both."]}
            )
        if self.require_target and "cluster" not in attrs and "brokers" not in attrs:
            raise serializers.ValidationError({"cluster": ["give a cluster (cluster mode) or brokers (broker mode)."]})
        return attrs

    def spec(self, name: str | None = None) -> TopicSpec:
        data = self.validated_data
        default = (
            (lambda key, value: data.get(key, value)) if self.fill_defaults else (lambda key, value: data.get(key))
        )
        queues = QueueSpec(
            default("read_queue_nums", DEFAULT_QUEUE_NUMS),
            default("write_queue_nums", DEFAULT_QUEUE_NUMS),
            default("perm", DEFAULT_PERM),
        )
        brokers = tuple(
            (broker, QueueSpec(v.get("read_queue_nums"), v.get("write_queue_nums"), v.get("perm")))
            for broker, v in sorted(data.get("brokers", {}).items())
        )
        return TopicSpec(
            name=name or data["name"],
            cluster=data.get("cluster"),
            queues=queues,
            brokers=brokers,
            message_type=data.get("message_type"),
        )


class TopicCreateInput(TopicWriteInput):
    name_rule = staticmethod(validate_new_topic_name)


class TopicReplaceInput(TopicWriteInput):
    """PUT: the whole topic (values left out take the defaults); ``name``, if given, must match the URL."""

    name = StrictCharField(trim_whitespace=False, allow_blank=True, required=False)
    confirm_unreachable_messages = StrictIntegerField(
        required=False,
        min_value=0,
        help_text="lowering read queues that hold messages hides them from consumers: refused unless this equals their count",
    )

    def validate(self, attrs: dict) -> dict:
        url_name = self.context.get("name")
        if "name" in attrs and attrs["name"] != url_name:
            raise serializers.ValidationError(
                {"name": [f"must match the topic of the URL ({url_name}) or be left out."]}
            )
        return super().validate(attrs)


class TopicPatchInput(TopicReplaceInput):
    """PATCH: only what is given changes; with neither cluster nor brokers, on every broker the topic is on."""

    require_target = False
    fill_defaults = False
    schema_rules: dict[str, Any] = {
        "not": {"required": ["cluster", "brokers"]},
        "anyOf": [
            {"required": [f]}
            for f in ("read_queue_nums", "write_queue_nums", "perm", "cluster", "brokers", "message_type")
        ],
        "properties": TopicWriteInput.schema_rules["properties"],
    }

    def validate(self, attrs: dict) -> dict:
        if not set(attrs) - {"name", "confirm_unreachable_messages"}:
            raise serializers.ValidationError(
                "nothing to change: give read_queue_nums, write_queue_nums, perm, message_type, cluster or brokers."
            )
        return super().validate(attrs)


class TestMessageInput(StrictInputSerializer):
    body = StrictCharField(trim_whitespace=False, max_length=65536)
    tags = StrictCharField(required=False, allow_blank=True, max_length=255)
    keys = StrictCharField(required=False, allow_blank=True, max_length=255)
    broker = StrictCharField(required=False, help_text="send to a queue of this broker")


class TopicDeleteQuery(StrictInputSerializer):
    cluster = StrictCharField(required=False, help_text="delete from this cluster only")
    broker = StrictCharField(required=False, help_text="delete from this broker only")


class TopicListQuery(serializers.Serializer):
    search = serializers.CharField(required=False, allow_blank=True, trim_whitespace=True)
    type = ChoiceSetField(choices=TOPIC_TYPES, required=False)
    broker = serializers.CharField(required=False)
    ordering = serializers.CharField(required=False, help_text="name, type (prefix - for descending)")


# -- output ----------------------------------------------------------------------------------------


class BrokerQueuesOutput(serializers.Serializer):
    cluster = serializers.CharField()
    addr = serializers.CharField()
    read_queue_nums = serializers.IntegerField()
    write_queue_nums = serializers.IntegerField()
    perm = serializers.IntegerField()
    perm_string = serializers.CharField()
    message_type = serializers.CharField(
        allow_null=True, help_text="the topic's message.type on this broker (NORMAL when unset); null: not read"
    )


class TopicOutput(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.ChoiceField(choices=TOPIC_TYPES)
    message_type = serializers.CharField(
        help_text='RocketMQ 5\'s message.type (NORMAL when unset); brokers that differ are joined by " / "; empty: no broker answered'
    )
    brokers = serializers.SerializerMethodField()

    @extend_schema_field(serializers.DictField(child=BrokerQueuesOutput()))
    def get_brokers(self, obj) -> dict:
        return {b.broker_name: _broker_queues(b) for b in obj.brokers}

    def to_representation(self, instance) -> dict:
        # The declared fields document the shape; building the dict directly keeps a page of
        # 1,000 topics cheap (a nested serializer per broker per row costs ~10x more).
        return {
            "name": instance.name,
            "type": instance.type,
            "message_type": instance.message_type,
            "brokers": self.get_brokers(instance),
        }


def _broker_queues(b) -> dict:
    return {
        "cluster": b.cluster,
        "addr": b.addr,
        "read_queue_nums": b.read_queue_nums,
        "write_queue_nums": b.write_queue_nums,
        "perm": b.perm,
        "perm_string": b.perm_string,
        "message_type": b.message_type,
    }


class QueueStatusOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    min_offset = serializers.IntegerField()
    max_offset = serializers.IntegerField()
    messages = serializers.IntegerField()
    last_update_timestamp = serializers.IntegerField(help_text="ms since the epoch; 0 when the queue is empty")
    last_update = serializers.DateTimeField(allow_null=True)


class TopicStatusOutput(serializers.Serializer):
    name = serializers.CharField()
    total_messages = serializers.IntegerField()
    queues = QueueStatusOutput(many=True)


class RouteBrokerOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    cluster = serializers.CharField()
    addrs = serializers.SerializerMethodField()
    read_queue_nums = serializers.IntegerField()
    write_queue_nums = serializers.IntegerField()
    perm = serializers.IntegerField()
    perm_string = serializers.CharField()

    @extend_schema_field(serializers.DictField(child=serializers.CharField(), help_text="broker id -> address"))
    def get_addrs(self, obj) -> dict:
        return {str(broker_id): addr for broker_id, addr in obj.addrs}


class TopicRouteOutput(serializers.Serializer):
    name = serializers.CharField()
    brokers = RouteBrokerOutput(many=True)
    order_topic_conf = serializers.CharField(allow_null=True)


class TopicConsumerRowOutput(serializers.Serializer):
    group = serializers.CharField()
    members = serializers.IntegerField(allow_null=True, help_text="online members (clients connected); null: not known")
    lag = serializers.IntegerField(
        allow_null=True, help_text="messages of this topic not consumed yet by the group; null: not asked or no answer"
    )
    tps = serializers.FloatField(allow_null=True, help_text="the brokers' consumeTps of the group in this topic")
    error = serializers.CharField(help_text="why lag or TPS is missing; empty when shown")


class TopicConsumersOutput(serializers.Serializer):
    name = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())
    errors = serializers.ListField(child=serializers.CharField())
    rows = TopicConsumerRowOutput(many=True, help_text="per group: online members, lag and consume TPS in this topic")


class TopicDeletionOutput(serializers.Serializer):
    name = serializers.CharField()
    brokers = serializers.ListField(child=serializers.CharField(), help_text="deleted on these brokers")
    scope = serializers.CharField(help_text="all, cluster:<name> or broker:<name>")
    remaining = serializers.ListField(child=serializers.CharField(), help_text="still on these brokers")


class SentMessageOutput(serializers.Serializer):
    topic = serializers.CharField()
    msg_id = serializers.CharField()
    offset_msg_id = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    queue_offset = serializers.IntegerField()
    status = serializers.CharField()


# -- safe shrink -----------------------------------------------------------------------------------


class ShrinkInput(StrictInputSerializer):
    schema_rules: dict[str, Any] = {"properties": {"target_queue_nums": _COUNT_RANGE}}

    target_queue_nums = StrictIntegerField(
        validators=[validate_queue_nums], help_text="queues per broker after the shrink"
    )
    step = serializers.ChoiceField(
        choices=("write", "read"), help_text="write: lower the write queues; read: then the read queues"
    )


class ShrinkQuery(serializers.Serializer):
    target_queue_nums = serializers.IntegerField(
        required=False, validators=[validate_queue_nums], help_text="the shrink to plan; default: the one under way"
    )


class TailGroupOutput(serializers.Serializer):
    group = serializers.CharField()
    consumer_offset = serializers.IntegerField(help_text="committed offset; -1 none")
    lag = serializers.IntegerField()


class TailQueueOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    min_offset = serializers.IntegerField()
    max_offset = serializers.IntegerField()
    last_store_timestamp = serializers.IntegerField(help_text="ms of its last message; 0 when empty")
    drained = serializers.BooleanField()
    groups = TailGroupOutput(many=True)


class ShrinkStatusOutput(serializers.Serializer):
    name = serializers.CharField()
    target_queue_nums = serializers.IntegerField(allow_null=True)
    step = serializers.ChoiceField(choices=("plan", "write", "read", "done"), help_text="the next step")
    ready = serializers.BooleanField(help_text="the read step may be taken now")
    drained = serializers.BooleanField()
    messages_left = serializers.IntegerField()
    settle_remaining_s = serializers.IntegerField()
    write_lowered_at = serializers.DateTimeField(allow_null=True)
    blockers = serializers.ListField(child=serializers.CharField())
    groups = serializers.ListField(child=serializers.CharField())
    brokers = serializers.SerializerMethodField()
    tail = TailQueueOutput(many=True)
    errors = serializers.ListField(child=serializers.CharField())

    @extend_schema_field(serializers.DictField(child=BrokerQueuesOutput()))
    def get_brokers(self, obj) -> dict:
        return {b.broker_name: _broker_queues(b) for b in obj.brokers}


# -- messages --------------------------------------------------------------------------------------


class MessageTimeField(serializers.Field):
    """A time: milliseconds since the epoch or ISO 8601 text (console.times)."""

    def to_internal_value(self, data) -> int:
        try:
            return parse_time_ms(data, self.field_name)
        except InvalidInput as exc:
            raise serializers.ValidationError(exc.fields[self.field_name][0]) from None

    def to_representation(self, value):
        return value


extend_schema_field(TIME_SCHEMA)(MessageTimeField)


class MessageQuery(serializers.Serializer):
    topic = serializers.CharField(help_text="the topic (RocketMQ's key index is per topic)")
    key = serializers.CharField(required=False, help_text="by key: KEYS or UNIQ_KEY")
    begin = MessageTimeField(required=False, help_text="store time from (ms or ISO 8601); by time: required")
    end = MessageTimeField(required=False, help_text="store time to; by time: required")
    page = serializers.IntegerField(required=False, min_value=1, default=1)
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=100, default=20, help_text="by time: messages per page, newest first"
    )

    def validate_topic(self, value: str) -> str:
        return validate_topic_name(value)

    def validate(self, attrs: dict) -> dict:
        if "key" not in attrs and ("begin" not in attrs or "end" not in attrs):
            raise serializers.ValidationError({"key": ["give a key, or begin and end (a store-time range)."]})
        return attrs


class TailQuery(StrictInputSerializer):
    count = serializers.IntegerField(
        required=False, min_value=1, max_value=50, default=20, help_text="how many of the newest messages"
    )


class MessageIdQuery(serializers.Serializer):
    topic = serializers.CharField(required=False, help_text="needed for a client-made id (UNIQ_KEY)")


class MessageSummaryOutput(serializers.Serializer):
    msg_id = serializers.CharField(help_text="offset message id")
    uniq_key = serializers.CharField(allow_null=True, help_text="the client-made id")
    topic = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    queue_offset = serializers.IntegerField()
    tags = serializers.CharField(allow_null=True)
    keys = serializers.CharField(allow_null=True)
    store_timestamp = serializers.IntegerField()
    store_time = serializers.DateTimeField(allow_null=True)
    born_timestamp = serializers.IntegerField()
    body_size = serializers.IntegerField()
    body_preview = serializers.CharField(
        help_text='the first 80 characters of the body as UTF-8 text, or "binary, N bytes"'
    )


class MessageOutput(MessageSummaryOutput):
    born_host = serializers.CharField()
    store_host = serializers.CharField()
    reconsume_times = serializers.IntegerField()
    properties = serializers.SerializerMethodField()
    body_encoding = serializers.ChoiceField(choices=("text", "hex"))
    body = serializers.SerializerMethodField(help_text="the body as text, or as hex bytes separated by spaces")
    truncated = serializers.BooleanField(help_text="the body is longer than what is shown (256 KiB)")

    @extend_schema_field(serializers.DictField(child=serializers.CharField()))
    def get_properties(self, obj) -> dict:
        return dict(obj.properties)

    def get_body(self, obj) -> str:
        text = obj.body_text
        return text if text is not None else obj.body_hex
