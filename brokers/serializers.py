"""Output serializers of /api/v1/{clusters,brokers,broker-groups,namesrvs,alerts} (the overview's dataclasses)."""
from __future__ import annotations

from rest_framework import serializers


class NamesrvOutput(serializers.Serializer):
    addr = serializers.CharField()
    live = serializers.BooleanField()
    version = serializers.CharField()
    error = serializers.CharField()


class ClusterOutput(serializers.Serializer):
    name = serializers.CharField()
    broker_names = serializers.ListField(child=serializers.CharField())


class BrokerOutput(serializers.Serializer):
    cluster = serializers.CharField()
    broker_name = serializers.CharField()
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    status = serializers.ChoiceField(choices=["live", "not answering", "expired"])
    version = serializers.CharField()
    last_seen = serializers.DateTimeField(allow_null=True, help_text="when the console last saw it registered and answering")
    topics = serializers.IntegerField(allow_null=True)
    queues = serializers.IntegerField(allow_null=True, help_text="read queues over all its topics")
    tps_in = serializers.FloatField(allow_null=True, help_text="messages put per second (last 10 s)")
    tps_out = serializers.FloatField(allow_null=True, help_text="messages got per second (last 10 s)")
    msg_put_total_today = serializers.CharField()
    msg_get_total_today = serializers.CharField()
    disk_ratio = serializers.FloatField(allow_null=True, help_text="commit log disk used, 0..1")
    boot_timestamp = serializers.CharField()
    error = serializers.CharField()
    role = serializers.CharField(source="ha.role", allow_null=True, help_text="brokerRole: ASYNC_MASTER, SYNC_MASTER, SLAVE")
    epoch = serializers.IntegerField(source="ha.epoch", allow_null=True, help_text="the group epoch in its store (null: not reported)")
    ha_connection = serializers.CharField(source="ha.connection", allow_null=True,
                                          help_text="haConnectionState: a slave's link to its master, a master's NO_SLAVE/CONNECTED")
    lag_bytes = serializers.IntegerField(source="ha.lag_bytes", allow_null=True, help_text="replication lag in bytes (null: no link)")
    lag_s = serializers.FloatField(source="ha.lag_s", allow_null=True, help_text="replication lag in seconds (null: no link)")
    master_addr = serializers.CharField(source="ha.master_addr", allow_null=True, help_text="a slave's master")


class BrokerGroupOutput(serializers.Serializer):
    cluster = serializers.CharField()
    broker_name = serializers.CharField()
    role = serializers.CharField(help_text="the master's role (empty without a master answering)")
    epoch = serializers.IntegerField(allow_null=True, help_text="the highest group epoch a member reports")
    members = BrokerOutput(many=True, help_text="master (broker_id 0) first, then the slaves")


class AlertOutput(serializers.Serializer):
    level = serializers.ChoiceField(choices=["error", "warning"])
    kind = serializers.CharField()
    target = serializers.CharField()
    message = serializers.CharField()
