"""Input and output of the message's consume state (GET messages/{msg_id}/track) and resend (POST messages/{msg_id}/resend)."""

from __future__ import annotations

from rest_framework import serializers

from console.rest import StrictCharField, StrictInputSerializer
from topics.messages.track import CONSUMED, CONSUMED_BUT_FILTERED, IN_FLIGHT, NOT_CONSUME_YET, NOT_ONLINE, PULL, UNKNOWN

STATES = (CONSUMED, CONSUMED_BUT_FILTERED, NOT_CONSUME_YET, NOT_ONLINE, PULL, IN_FLIGHT, UNKNOWN)


class GroupTrackOutput(serializers.Serializer):
    group = serializers.CharField()
    state = serializers.ChoiceField(
        choices=STATES, help_text="RocketMQ's TrackType (IN_FLIGHT: a POP consumer's, not reported yet)"
    )
    committed_offset = serializers.IntegerField(
        allow_null=True, help_text="the group's committed offset of the message's queue"
    )
    consumed = serializers.BooleanField(
        allow_null=True, help_text="the committed offset lies past the message's queue offset"
    )
    clients = serializers.ListField(child=serializers.CharField(), help_text="online client ids")
    consume_type = serializers.CharField(
        allow_null=True, help_text="CONSUME_PASSIVELY (push) or CONSUME_ACTIVELY (pull)"
    )
    can_resend = serializers.BooleanField()
    remark = serializers.CharField()


class MessageTrackOutput(serializers.Serializer):
    msg_id = serializers.CharField(source="message.msg_id", help_text="offset message id")
    topic = serializers.CharField(source="message.topic")
    broker_name = serializers.CharField(source="message.broker_name")
    queue_id = serializers.IntegerField(source="message.queue_id")
    queue_offset = serializers.IntegerField(source="message.queue_offset")
    groups = GroupTrackOutput(many=True)
    errors = serializers.ListField(child=serializers.CharField())


class MessageResendInput(StrictInputSerializer):
    topic = StrictCharField(required=False, help_text="needed for a client-made id (UNIQ_KEY)")
    group = StrictCharField(help_text="a push consumer group of the message's topic")
    client_id = StrictCharField(help_text="an online client of the group")


class MessageResendOutput(serializers.Serializer):
    msg_id = serializers.CharField(help_text="the offset message id resent")
    topic = serializers.CharField()
    group = serializers.CharField()
    client_id = serializers.CharField()
    consume_result = serializers.CharField(
        help_text="the client's answer: CR_SUCCESS, CR_LATER, CR_RETURN_NULL, CR_THROW_EXCEPTION, ..."
    )
    remark = serializers.CharField()
    spent_ms = serializers.IntegerField()
    ok = serializers.BooleanField()
