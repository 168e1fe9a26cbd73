"""Shapes of GET /api/v1/messages/{msg_id}/trace: the query (the trace topic) and the decoded trace."""

from __future__ import annotations

from rest_framework import serializers

from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC


class TraceQuery(serializers.Serializer):
    trace_topic = serializers.CharField(
        required=False,
        default=RMQ_SYS_TRACE_TOPIC,
        max_length=127,
        help_text="the trace topic the clients write to (default RMQ_SYS_TRACE_TOPIC)",
    )


class TraceRecordOutput(serializers.Serializer):
    """One RocketMQ trace record (TraceContext + TraceBean); fields its type lacks are null or empty."""

    trace_type = serializers.ChoiceField(choices=["Pub", "SubBefore", "SubAfter", "EndTransaction"])
    msg_id = serializers.CharField()
    timestamp_ms = serializers.IntegerField(allow_null=True)
    region_id = serializers.CharField(allow_blank=True)
    group = serializers.CharField(allow_blank=True, help_text="producer group (Pub) or consumer group (Sub*)")
    topic = serializers.CharField(allow_blank=True)
    tags = serializers.CharField(allow_blank=True)
    keys = serializers.CharField(allow_blank=True)
    store_host = serializers.CharField(allow_blank=True)
    body_length = serializers.IntegerField(allow_null=True)
    cost_ms = serializers.IntegerField(allow_null=True)
    msg_type_name = serializers.CharField(allow_blank=True)
    offset_msg_id = serializers.CharField(allow_blank=True)
    success = serializers.BooleanField(allow_null=True)
    request_id = serializers.CharField(allow_blank=True)
    retry_times = serializers.IntegerField(allow_null=True)
    context_name = serializers.CharField(allow_blank=True, help_text="ConsumeReturnType of a SubAfter")


class PublishOutput(serializers.Serializer):
    client_host = serializers.CharField(help_text="the sending client's host")
    broker_name = serializers.CharField(
        allow_blank=True, help_text="the broker at the record's store host ('' when not in this cluster)"
    )
    record = TraceRecordOutput()


class ConsumeAttemptOutput(serializers.Serializer):
    group = serializers.CharField()
    request_id = serializers.CharField()
    client_host = serializers.CharField(help_text="the consuming client's host")
    status = serializers.CharField()
    before = TraceRecordOutput(allow_null=True)
    after = TraceRecordOutput(allow_null=True)


class MessageTraceOutput(serializers.Serializer):
    msg_id = serializers.CharField()
    trace_topic = serializers.CharField()
    found = serializers.BooleanField()
    published = PublishOutput(many=True, source="pubs")
    consumed = ConsumeAttemptOutput(many=True, source="consumes")
    other = PublishOutput(many=True, source="others", help_text="EndTransaction records")
    trace_messages = serializers.IntegerField(help_text="trace messages read from the trace topic")
    skipped_records = serializers.IntegerField(help_text="records that did not decode")
