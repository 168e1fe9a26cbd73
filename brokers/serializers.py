"""Output serializers of /api/v1/{clusters,brokers,broker-groups,namesrvs,alerts} (the overview's dataclasses)."""

from __future__ import annotations

from rest_framework import serializers

from brokers.gateway.overview import EXPIRED, LIVE, NOT_ANSWERING
from brokers.gateway.runtime_status import NO_THREAD_POOL
from brokers.gateway.store_disk import STATES
from console.query_filters import ChoiceFilterField


class BrokerListQuery(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="only brokers of this cluster")
    status = ChoiceFilterField(choices=(LIVE, NOT_ANSWERING, EXPIRED), required=False)


class NamesrvOutput(serializers.Serializer):
    addr = serializers.CharField()
    live = serializers.BooleanField()
    version = serializers.CharField()
    error = serializers.CharField()


class ClusterOutput(serializers.Serializer):
    name = serializers.CharField()
    broker_names = serializers.ListField(child=serializers.CharField())


class RetentionOutput(serializers.Serializer):
    """The broker's retention settings under RocketMQ's names (null: the broker does not report it)."""

    file_reserved_time_hours = serializers.FloatField(
        allow_null=True, help_text="fileReservedTime: hours a commit log file is kept"
    )
    delete_when = serializers.CharField(
        allow_null=True, help_text='deleteWhen: the hour(s) expired files go, "04" or "03;04"'
    )
    disk_max_used_space_ratio = serializers.FloatField(
        allow_null=True, help_text="diskMaxUsedSpaceRatio, 0..1: above it expired files go at any hour"
    )
    disk_space_clean_forcibly_ratio = serializers.FloatField(
        allow_null=True, help_text="diskSpaceCleanForciblyRatio, 0..1: above it the oldest files go even if not expired"
    )
    disk_space_warning_level_ratio = serializers.FloatField(
        allow_null=True,
        help_text="diskSpaceWarningLevelRatio, 0..1: at or above it the broker refuses sends (disk full)",
    )


class BrokerOutput(serializers.Serializer):
    cluster = serializers.CharField()
    broker_name = serializers.CharField()
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    status = serializers.ChoiceField(choices=["live", "not answering", "expired"])
    version = serializers.CharField()
    last_seen = serializers.DateTimeField(
        allow_null=True, help_text="when the console last saw it registered and answering"
    )
    topics = serializers.IntegerField(allow_null=True)
    queues = serializers.IntegerField(allow_null=True, help_text="read queues over all its topics")
    tps_in = serializers.FloatField(allow_null=True, help_text="messages put per second (last 10 s)")
    tps_out = serializers.FloatField(allow_null=True, help_text="messages got per second (last 10 s)")
    msg_put_total_today = serializers.CharField()
    msg_get_total_today = serializers.CharField()
    disk_ratio = serializers.FloatField(allow_null=True, help_text="commit log disk used, 0..1")
    boot_timestamp = serializers.CharField()
    error = serializers.CharField()
    role = serializers.CharField(
        source="ha.role", allow_null=True, help_text="brokerRole: ASYNC_MASTER, SYNC_MASTER, SLAVE"
    )
    epoch = serializers.IntegerField(
        source="ha.epoch", allow_null=True, help_text="the group epoch in its store (null: not reported)"
    )
    ha_connection = serializers.CharField(
        source="ha.connection",
        allow_null=True,
        help_text="haConnectionState: a slave's link to its master, a master's NO_SLAVE/CONNECTED",
    )
    lag_bytes = serializers.IntegerField(
        source="ha.lag_bytes", allow_null=True, help_text="replication lag in bytes (null: no link)"
    )
    lag_s = serializers.FloatField(
        source="ha.lag_s", allow_null=True, help_text="replication lag in seconds (null: no link)"
    )
    master_addr = serializers.CharField(source="ha.master_addr", allow_null=True, help_text="a slave's master")
    disk_total_bytes = serializers.IntegerField(
        source="disk.total_bytes",
        allow_null=True,
        help_text="size of the commit log's filesystem (diskTotalBytes, else commitLogDirCapacity)",
    )
    disk_used_bytes = serializers.IntegerField(source="disk.used_bytes", allow_null=True, help_text="bytes used on it")
    disk_used_ratio = serializers.FloatField(
        source="disk.ratio", allow_null=True, help_text="disk_used_bytes / disk_total_bytes, 0..1"
    )
    disk_state = serializers.ChoiceField(
        source="disk.state",
        choices=list(STATES),
        allow_null=True,
        help_text="ok; high (at or above 0.85 on a broker reporting no retention settings); "
        "cleaning (at or above diskMaxUsedSpaceRatio); cleaning forcibly (at or above "
        "diskSpaceCleanForciblyRatio); refusing sends (disk full, or the store not writable)",
    )
    refusing_sends = serializers.BooleanField(
        source="disk.refusing_sends",
        allow_null=True,
        help_text="the broker refuses sends: disk_full, or store_writable false",
    )
    disk_full = serializers.BooleanField(
        source="disk.disk_full",
        allow_null=True,
        help_text="diskFull: usage at or above diskSpaceWarningLevelRatio (null: not reported)",
    )
    store_writable = serializers.BooleanField(
        source="disk.store_writable",
        allow_null=True,
        help_text="storeWritable: false after an I/O error until restart (null: not reported)",
    )
    store_not_writable_reason = serializers.CharField(source="disk.not_writable_reason", allow_null=True)
    retention = RetentionOutput(source="disk.retention", allow_null=True)
    earliest_message_timestamp = serializers.IntegerField(
        source="disk.earliest_message_timestamp",
        allow_null=True,
        help_text="store time of the oldest message kept, ms (null: none stored)",
    )
    earliest_message = serializers.DateTimeField(source="disk.earliest_message", allow_null=True)
    last_clean_timestamp = serializers.IntegerField(
        source="disk.last_clean_timestamp",
        allow_null=True,
        help_text="when retention last deleted files, ms (null: never, or not reported)",
    )
    cleaned_files_total = serializers.IntegerField(
        source="disk.cleaned_files_total",
        allow_null=True,
        help_text="commit log files deleted since the broker started",
    )


class BrokerGroupOutput(serializers.Serializer):
    cluster = serializers.CharField()
    broker_name = serializers.CharField()
    role = serializers.CharField(help_text="the master's role (empty without a master answering)")
    epoch = serializers.IntegerField(allow_null=True, help_text="the highest group epoch a member reports")
    members = BrokerOutput(many=True, help_text="master (broker_id 0) first, then the slaves")


class MemberConfigOutput(serializers.Serializer):
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    properties = serializers.SerializerMethodField(help_text="the broker's settings under RocketMQ's property names")
    error = serializers.CharField(help_text="why there are no properties; empty when it answered")

    def get_properties(self, obj) -> dict[str, str]:
        return dict(obj.properties)


class BrokerGroupConfigOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    members = MemberConfigOutput(many=True, help_text="GET_BROKER_CONFIG of each member, master first (read only)")


class ProducerClientOutput(serializers.Serializer):
    client_id = serializers.CharField()
    addr = serializers.CharField(help_text="ip:port as the broker sees it")
    language = serializers.CharField()
    version = serializers.CharField(
        source="version_name", help_text="RocketMQ's version name, e.g. V4_9_8 (as the group API)"
    )
    version_code = serializers.IntegerField(
        source="version", help_text="the MQVersion ordinal the client reported, e.g. 409"
    )
    last_heartbeat_ms = serializers.IntegerField(help_text="when a broker last heard from it (ms since the epoch)")
    brokers = serializers.ListField(child=serializers.CharField(), help_text="master addresses it is connected to")


class ProducerGroupOutput(serializers.Serializer):
    group = serializers.CharField()
    clients = ProducerClientOutput(many=True)


class ProducerGroupsOutput(serializers.Serializer):
    groups = ProducerGroupOutput(many=True)
    errors = serializers.ListField(child=serializers.CharField(), help_text="brokers that did not answer")


class AlertOutput(serializers.Serializer):
    level = serializers.ChoiceField(choices=["error", "warning"])
    kind = serializers.CharField()
    target = serializers.CharField()
    message = serializers.CharField()


class RuntimeStatusOutput(serializers.Serializer):
    """The figures of rocketmq-dashboard's brokerStatus (GET_BROKER_RUNTIME_INFO), typed; null: not reported."""

    put_tps = serializers.FloatField(allow_null=True, help_text="putTps: messages stored per second, last 10 s")
    get_tps = serializers.FloatField(
        allow_null=True, help_text="getTransferedTps: messages sent to consumers per second, last 10 s"
    )
    commit_log_disk_ratio = serializers.FloatField(
        allow_null=True, help_text="commitLogDiskRatio: used fraction of the commit log's disk, 0..1"
    )
    page_cache_lock_ms = serializers.IntegerField(allow_null=True, help_text="pageCacheLockTimeMills")
    remain_to_flush_bytes = serializers.IntegerField(
        allow_null=True, help_text="remainHowManyDataToFlush: bytes not yet flushed"
    )
    version = serializers.CharField(help_text="brokerVersionDesc")
    boot_timestamp_ms = serializers.IntegerField(allow_null=True, help_text="bootTimestamp (ms since the epoch)")
    uptime_s = serializers.IntegerField(allow_null=True, help_text="seconds since bootTimestamp")
    uptime = serializers.CharField(help_text="uptime as HH:MM:SS")
    msg_put_total = serializers.IntegerField(
        allow_null=True, help_text="msgPutTotalTodayNow: messages put since the broker started"
    )
    msg_get_total = serializers.IntegerField(
        allow_null=True, help_text="msgGetTotalTodayNow: messages got since the broker started"
    )
    msg_put_today = serializers.IntegerField(allow_null=True, help_text="msgPutTotalTodayNow - msgPutTotalTodayMorning")
    msg_get_today = serializers.IntegerField(allow_null=True, help_text="msgGetTotalTodayNow - msgGetTotalTodayMorning")
    thread_pools = serializers.SerializerMethodField(
        help_text="Gantry's broker has no request thread pools (its event loop runs "
        "requests): the send/pull pool queue figures are not reported"
    )

    def get_thread_pools(self, obj) -> str:
        return NO_THREAD_POOL


class MemberRuntimeOutput(serializers.Serializer):
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    available = serializers.SerializerMethodField()
    error = serializers.CharField(help_text='why the member is unavailable ("" when it answered)')
    status = RuntimeStatusOutput(allow_null=True, help_text="null when the member did not answer")

    def get_available(self, obj) -> bool:
        return obj.status is not None


class BrokerRuntimeOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    members = MemberRuntimeOutput(many=True, help_text="each member's runtime status, master first")
