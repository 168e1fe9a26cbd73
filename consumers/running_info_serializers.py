"""The shape of GET /api/v1/groups/{name}/clients/{client_id}/running-info (a member's
GET_CONSUMER_RUNNING_INFO, brokers/gateway/running_info.py)::

    {"group", "client_id", "client_addr", "language", "version", "broker_addr",
     "properties": {"consumeThreadMax": "20", ...},
     "subscriptions": [{"topic", "expression", "expression_type", "tags", "sub_version"}],
     "statuses": [{"topic", "pull_rt", "pull_tps", "consume_rt", "consume_ok_tps", "consume_failed_tps", "consume_failed_msgs"}],
     "queues": [{"topic", "broker_name", "queue_id", "commit_offset", "cached_msg_min_offset", "cached_msg_max_offset",
                 "cached_msg_count", "cached_msg_size_in_mib", "locked", "dropped", "last_pull_timestamp", "last_consume_timestamp"}]}

RTs are in milliseconds, TPS per second, timestamps in milliseconds since the epoch (0: never).
"""

from __future__ import annotations

from rest_framework import serializers


class RunningSubscriptionOutput(serializers.Serializer):
    topic = serializers.CharField()
    expression = serializers.CharField()
    expression_type = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    sub_version = serializers.IntegerField()


class RunningTopicStatusOutput(serializers.Serializer):
    topic = serializers.CharField()
    pull_rt = serializers.FloatField()
    pull_tps = serializers.FloatField()
    consume_rt = serializers.FloatField()
    consume_ok_tps = serializers.FloatField()
    consume_failed_tps = serializers.FloatField()
    consume_failed_msgs = serializers.IntegerField()


class RunningQueueOutput(serializers.Serializer):
    topic = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    commit_offset = serializers.IntegerField()
    cached_msg_min_offset = serializers.IntegerField()
    cached_msg_max_offset = serializers.IntegerField()
    cached_msg_count = serializers.IntegerField()
    cached_msg_size_in_mib = serializers.IntegerField()
    locked = serializers.BooleanField()
    dropped = serializers.BooleanField()
    last_pull_timestamp = serializers.IntegerField()
    last_consume_timestamp = serializers.IntegerField()


class ClientRunningInfoOutput(serializers.Serializer):
    group = serializers.CharField()
    client_id = serializers.CharField()
    client_addr = serializers.CharField()
    language = serializers.CharField()
    version = serializers.CharField()
    broker_addr = serializers.CharField()
    properties = serializers.SerializerMethodField()
    subscriptions = RunningSubscriptionOutput(many=True)
    statuses = RunningTopicStatusOutput(many=True)
    queues = RunningQueueOutput(many=True)

    def get_properties(self, obj) -> dict[str, str]:
        return dict(obj.properties)
