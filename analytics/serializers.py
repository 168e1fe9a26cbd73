"""Dashboard API serializers: strict query inputs (unknown parameters and bad values refused, the
field named) and the shapes of the JSON envelopes of docs/analytics.md section 4 (the selectors
build the envelopes; these describe them in the OpenAPI schema)."""

from __future__ import annotations

from rest_framework import serializers

from analytics.selectors import BACKLOG_BY, DEFAULT_RESOLUTION, RANGES, RESOLUTION_SECONDS, THROUGHPUT_BY
from console.query_filters import ChoiceFilterField
from console.rest import StrictInputSerializer

_RANGE_HELP = "hour (last 60 min), day (24 h) or week (7 days), ending now"
_RESOLUTION_HELP = "1m or 1h; default " + ", ".join(f"{r}: {res}" for r, res in DEFAULT_RESOLUTION.items())


class ThroughputQuery(StrictInputSerializer):
    range = ChoiceFilterField(choices=list(RANGES), default="hour", help_text=_RANGE_HELP)
    by = ChoiceFilterField(choices=list(THROUGHPUT_BY), default="topic")
    topic = serializers.CharField(required=False, allow_blank=True, help_text="only this topic (by=topic or by=queue)")
    broker = serializers.CharField(
        required=False, allow_blank=True, help_text="only this broker (by=broker or by=queue)"
    )
    resolution = ChoiceFilterField(choices=list(RESOLUTION_SECONDS), required=False, help_text=_RESOLUTION_HELP)
    system = serializers.BooleanField(
        required=False,
        default=False,
        help_text="include the broker's own topics (RMQ_SYS_TRACE_TOPIC, ...) that carried messages",
    )


class BacklogQuery(StrictInputSerializer):
    range = ChoiceFilterField(choices=list(RANGES), default="hour", help_text=_RANGE_HELP)
    by = ChoiceFilterField(choices=list(BACKLOG_BY), default="group")
    group = serializers.CharField(required=False, allow_blank=True, help_text="only this consumer group")
    topic = serializers.CharField(required=False, allow_blank=True, help_text="only this topic")
    resolution = ChoiceFilterField(choices=list(RESOLUTION_SECONDS), required=False, help_text=_RESOLUTION_HELP)


class RefreshInput(StrictInputSerializer):
    """No fields: the body is empty or ``{}``."""


# -- output shapes -------------------------------------------------------------------------------------


class RefreshRunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = ChoiceFilterField(choices=["queued", "running", "succeeded", "failed"])
    progress = serializers.CharField()
    trigger = ChoiceFilterField(choices=["nightly", "manual", "api", "live"])
    requested_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField()
    rows_read = serializers.IntegerField(allow_null=True, help_text="lake samples the run read")
    window_from = serializers.DateTimeField(allow_null=True, help_text="first window the run replaced")
    window_to = serializers.DateTimeField(allow_null=True, help_text="the run's now")


class StateOutput(serializers.Serializer):
    last_refresh_at = serializers.DateTimeField(allow_null=True, help_text="when the last good refresh finished")
    data_until = serializers.DateTimeField(allow_null=True, help_text="newest sample the last good refresh read")
    stale_since = serializers.DateTimeField(
        allow_null=True, help_text="start of the first failed refresh after the last good one"
    )
    run = RefreshRunOutput(allow_null=True, help_text="the latest refresh run")


class RankOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    name = serializers.CharField()
    value = serializers.FloatField()


class ThroughputKeyOutput(serializers.Serializer):
    topic = serializers.CharField(allow_null=True)
    broker = serializers.CharField(allow_null=True)
    queue_id = serializers.IntegerField(allow_null=True)


class ThroughputPointOutput(serializers.Serializer):
    t = serializers.DateTimeField(help_text="window start")
    msgs_per_s = serializers.FloatField()
    bytes_per_s = serializers.FloatField(allow_null=True)


class ThroughputSeriesOutput(serializers.Serializer):
    key = ThroughputKeyOutput()
    label = serializers.CharField()
    points = ThroughputPointOutput(many=True)


class CoverageOutput(serializers.Serializer):
    namesrv_set = serializers.CharField(
        help_text="the name-server set (cluster) the figures are of: the samplers watch default only"
    )
    covers_current_set = serializers.BooleanField(
        help_text="false when the request's set is another one: these are not its figures"
    )
    note = serializers.CharField(help_text="what a page shows when covers_current_set is false; empty otherwise")


class _EnvelopeOutput(serializers.Serializer):
    coverage = CoverageOutput()
    range = serializers.CharField()
    resolution = serializers.CharField()
    by = serializers.CharField()
    # "from" is a keyword: the field is declared below.
    to = serializers.DateTimeField()
    state = StateOutput()


_EnvelopeOutput._declared_fields["from"] = serializers.DateTimeField()


class ThroughputOutput(_EnvelopeOutput):
    series = ThroughputSeriesOutput(many=True)
    top = RankOutput(many=True, help_text="busiest topics over the last hour at the last refresh")


class BacklogKeyOutput(serializers.Serializer):
    group = serializers.CharField()
    topic = serializers.CharField()
    broker = serializers.CharField(allow_null=True)
    queue_id = serializers.IntegerField(allow_null=True)


class BacklogPointOutput(serializers.Serializer):
    t = serializers.DateTimeField(help_text="window start")
    backlog = serializers.IntegerField(help_text="at the window's last sample")
    consume_rate = serializers.FloatField(allow_null=True)
    produce_rate = serializers.FloatField(allow_null=True)


class BacklogSeriesOutput(serializers.Serializer):
    key = BacklogKeyOutput()
    label = serializers.CharField()
    points = BacklogPointOutput(many=True)


class TrendOutput(serializers.Serializer):
    group = serializers.CharField()
    topic = serializers.CharField()
    backlog = serializers.IntegerField()
    trend = ChoiceFilterField(choices=["growing", "draining", "steady"])
    slope_per_s = serializers.FloatField(allow_null=True)
    consume_rate = serializers.FloatField(allow_null=True)
    produce_rate = serializers.FloatField(allow_null=True)
    time_to_drain_s = serializers.FloatField(allow_null=True)


class BacklogOutput(_EnvelopeOutput):
    series = BacklogSeriesOutput(many=True)
    trends = TrendOutput(many=True)
    top = RankOutput(many=True, help_text="groups with the largest backlog at the last refresh")
