"""Input and output serializers of /api/v1/groups/{name}/dlq (page, resend, export)."""

from __future__ import annotations

from rest_framework import serializers

from console.rest import StrictCharField, StrictInputSerializer
from topics.dead_letters.types import MAX_EXPORT, MAX_RESEND, NO_REASON_STORED
from topics.serializers import MessageSummaryOutput, MessageTimeField


class DeadLetterQuery(StrictInputSerializer):
    page = serializers.IntegerField(required=False, min_value=1, default=1)
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=100, default=20, help_text="dead letters per page, newest first"
    )


class DeadLetterExportQuery(StrictInputSerializer):
    begin = MessageTimeField(required=False, help_text="moved to the DLQ from (ms or ISO 8601); default: the beginning")
    end = MessageTimeField(required=False, help_text="moved to the DLQ until; default: now")
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_EXPORT,
        default=MAX_EXPORT,
        help_text=f"dead letters at most (at most {MAX_EXPORT:,})",
    )
    format = serializers.ChoiceField(
        choices=("json", "ndjson"),
        required=False,
        help_text="DRF's format override: the export is JSON lines either way; errors are JSON (json) or one JSON line",
    )


class DeadLetterResendInput(StrictInputSerializer):
    msg_ids = serializers.ListField(
        child=StrictCharField(min_length=1, max_length=64, help_text="an offset message id, as the DLQ list shows it"),
        min_length=1,
        max_length=MAX_RESEND,
        help_text=f"the dead letters to resend to the group's retry topic (1 to {MAX_RESEND})",
    )


class DeadLetterOutput(serializers.Serializer):
    msg_id = serializers.CharField(help_text="offset message id of the dead letter")
    original_topic = serializers.CharField(allow_null=True, help_text="RETRY_TOPIC: where the message was first sent")
    origin_msg_id = serializers.CharField(allow_null=True, help_text="ORIGIN_MESSAGE_ID: the original's client-made id")
    reconsume_times = serializers.IntegerField(help_text="deliveries to the group before it was moved to the DLQ")
    last_error = serializers.CharField(
        allow_null=True,
        help_text="why the consumer sent it back the last time (GANTRY_LAST_ERROR: "
        "Gantry's consumers record their listener's exception; null from other clients)",
    )
    moved_at = serializers.DateTimeField(allow_null=True, help_text="store time in the DLQ")
    message = MessageSummaryOutput()


class DeadLetterPageOutput(serializers.Serializer):
    group = serializers.CharField()
    dlq_topic = serializers.CharField()
    retry_topic = serializers.CharField(help_text="where a resend sends copies: only this group subscribes it")
    exists = serializers.BooleanField(help_text="false while the group has no DLQ topic (no dead letter yet)")
    count = serializers.IntegerField(source="total")
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    page_size = serializers.IntegerField()
    last_error = serializers.SerializerMethodField(
        help_text="where each result's last_error comes from, and why it may be null"
    )
    results = DeadLetterOutput(source="letters", many=True)

    def get_last_error(self, page) -> str:
        return NO_REASON_STORED


class ResendResultOutput(serializers.Serializer):
    msg_id = serializers.CharField()
    ok = serializers.BooleanField()
    new_msg_id = serializers.CharField(help_text="the copy's client-made id (UNIQ_KEY); empty when it failed")
    error = serializers.CharField(help_text="why it was not resent; empty when it was")


class DeadLetterResendOutput(serializers.Serializer):
    group = serializers.CharField()
    topic = serializers.CharField(help_text="where the copies went: %RETRY%<group>")
    resent = serializers.IntegerField()
    failed = serializers.IntegerField()
    results = ResendResultOutput(many=True)
