"""Rebalance API shapes: strict inputs, outputs rendering :mod:`consumers.rebalance.types`.

::

    POST /api/v1/groups/{name}/rebalance   {"dry_run": true, "timeout_s": 30}      (both optional)
    POST /api/v1/rebalance-jobs            {"scope": "group", "group": "G"} | {"scope": "topic", "topic": "T"}
                                           | {"scope": "all"}  (+ dry_run, timeout_s)
      -> 202 a new job | 200 the job already active for that scope (same body)
    GET  /api/v1/rebalance-jobs?group=&topic=&status=running,failed&scope=&dry_run=&since=&until=&requested_by=&page=
    GET  /api/v1/rebalance-jobs/{id}       the job with "groups": [{..., "changes": [queue rows]}]
"""

from __future__ import annotations

from datetime import datetime, timezone

from rest_framework import serializers

from console.query_filters import ChoiceFilterField, ChoiceSetField
from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer, StrictIntegerField
from consumers.models import RebalanceJob
from consumers.rebalance.jobs import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from consumers.rebalance.selectors import JobFilter
from consumers.serializers import TimeField


class RebalanceInput(StrictInputSerializer):
    dry_run = StrictBooleanField(
        required=False, default=True, help_text="true (default): only show the expected movement"
    )
    timeout_s = StrictIntegerField(
        required=False,
        min_value=1,
        max_value=MAX_TIMEOUT_S,
        help_text=f"how long to wait for convergence (default {DEFAULT_TIMEOUT_S})",
    )


class RebalanceJobInput(RebalanceInput):
    schema_rules = {
        "oneOf": [  # what validate() enforces: the scope's own name field, and no other
            {"properties": {"scope": {"enum": ["group"]}}, "required": ["group"], "not": {"required": ["topic"]}},
            {"properties": {"scope": {"enum": ["topic"]}}, "required": ["topic"], "not": {"required": ["group"]}},
            {
                "properties": {"scope": {"enum": ["all"]}},
                "not": {"anyOf": [{"required": ["group"]}, {"required": ["topic"]}]},
            },
        ]
    }

    scope = serializers.ChoiceField(choices=RebalanceJob.SCOPES)
    group = StrictCharField(required=False, help_text="scope group: the group")
    topic = StrictCharField(required=False, help_text="scope topic: the groups subscribing this topic")

    def validate(self, data: dict) -> dict:
        needed = {"group": "group", "topic": "topic"}.get(data["scope"])
        if needed and not data.get(needed):
            raise serializers.ValidationError({needed: [f"required with scope {data['scope']}."]})
        for other in ("group", "topic"):
            if other != needed and data.get(other):
                raise serializers.ValidationError({other: [f"not used with scope {data['scope']}."]})
        data["value"] = data.get(needed, "") if needed else ""
        return data


def _ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


class RebalanceJobQuery(StrictInputSerializer):
    group = StrictCharField(required=False, help_text="jobs that included this group")
    topic = StrictCharField(required=False, help_text="topic jobs of this topic, and jobs that moved its queues")
    status = ChoiceSetField(choices=RebalanceJob.STATUSES, required=False)
    scope = ChoiceFilterField(choices=RebalanceJob.SCOPES, required=False)
    dry_run = ChoiceFilterField(choices=("true", "false"), required=False)
    since = TimeField(required=False, help_text="created at or after (ms or ISO 8601)")
    until = TimeField(required=False, help_text="created before (ms or ISO 8601)")
    requested_by = StrictCharField(required=False)
    page = serializers.IntegerField(required=False, min_value=1)
    page_size = serializers.IntegerField(required=False, min_value=1)

    def filters(self) -> JobFilter:
        d = self.validated_data
        return JobFilter(
            group=d.get("group", ""),
            topic=d.get("topic", ""),
            status=d.get("status", frozenset()),
            scope=d.get("scope", ""),
            dry_run={"true": True, "false": False}.get(d.get("dry_run", "")),
            since=_ms_to_datetime(d["since"]) if "since" in d else None,
            until=_ms_to_datetime(d["until"]) if "until" in d else None,
            requested_by=d.get("requested_by", ""),
        )


class QueueChangeOutput(serializers.Serializer):
    topic = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    before = serializers.CharField(help_text="client ids holding it before (', '-joined; empty: nobody)")
    expected = serializers.CharField(help_text="the owner the strategy gives it (empty: unknown)")
    after = serializers.CharField(help_text="client ids holding it after (empty until the job ends, or nobody)")
    moved = serializers.BooleanField(help_text="holders changed (dry run: would change)")


class GroupResultOutput(serializers.Serializer):
    group = serializers.CharField()
    status = serializers.CharField(help_text="pending, planned, converged, not_converged, failed, skipped")
    reason = serializers.CharField()
    strategy = serializers.CharField()
    expected_known = serializers.BooleanField()
    members_before = serializers.ListField(child=serializers.CharField())
    members_after = serializers.ListField(child=serializers.CharField())
    queues_total = serializers.IntegerField()
    queues_moved = serializers.IntegerField()
    notified = serializers.DictField(help_text="broker address -> client ids it notified, or {'error': ...}")
    changes = QueueChangeOutput(many=True)


class RebalanceJobOutput(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    namesrv_set = serializers.CharField(help_text="the name-server set (cluster) the job runs against")
    requested_by = serializers.CharField()
    source = serializers.CharField()
    scope = serializers.CharField()
    scope_value = serializers.CharField()
    dry_run = serializers.BooleanField()
    status = serializers.CharField(help_text=f"one of {', '.join(RebalanceJob.STATUSES)}")
    active = serializers.BooleanField()
    reason = serializers.CharField()
    progress = serializers.CharField()
    timeout_s = serializers.IntegerField()
    attempts = serializers.IntegerField(
        help_text="runs of its task: retries after connection errors and a redelivery after a lost worker add one each"
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)
    groups_total = serializers.IntegerField()
    groups_converged = serializers.IntegerField()
    queues_moved = serializers.IntegerField(help_text="queues whose holders changed (dry run: would change)")

    def get_url(self, job) -> str:
        return f"/api/v1/rebalance-jobs/{job.id}"


class RebalanceJobDetailOutput(RebalanceJobOutput):
    groups = GroupResultOutput(many=True)
