"""Output of GET /api/v1/groups/{name}/pop-state (consumers/pop_state.py)."""

from __future__ import annotations

from rest_framework import serializers


class PopDeliveryOutput(serializers.Serializer):
    offset = serializers.IntegerField()
    pop_time = serializers.IntegerField(help_text="ms; when it was popped (or its invisible time last changed)")
    invisible_until = serializers.IntegerField(help_text="ms; delivered again after this unless acked")
    invisible_until_at = serializers.DateTimeField()
    attempt = serializers.IntegerField(help_text="the 5.x delivery attempt (reconsume times + 1)")
    msg_id = serializers.CharField(help_text="the stored record's offset message id")


class PopQueueOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    topic = serializers.CharField()
    queue_id = serializers.IntegerField()
    cursor = serializers.IntegerField(help_text="the next offset the group never popped")
    in_flight = serializers.IntegerField(help_text="deliveries not acked (all of them; deliveries may list fewer)")
    deliveries = PopDeliveryOutput(many=True)


class GroupPopStateOutput(serializers.Serializer):
    group = serializers.CharField()
    in_flight = serializers.IntegerField(help_text="deliveries not acked over every queue")
    truncated = serializers.BooleanField(help_text="a broker listed fewer deliveries than it has in flight")
    queues = PopQueueOutput(many=True)
    errors = serializers.ListField(child=serializers.CharField())
