"""Promotion API shapes: a strict input, outputs rendering :mod:`brokers.promotion.types`.

::

    POST /api/v1/brokers/{name}/promote   {"broker_id": 1, "force": false, "dry_run": true, "role": "SYNC_MASTER"}
      (broker_id required; force false, dry_run true and role the master's by default)
      -> 202 a new job | 200 the job already active for the group (same body)
    GET  /api/v1/promotion-jobs?broker=&status=planned,failed&dry_run=&page=&page_size=
    GET  /api/v1/promotion-jobs/{id}
"""

from __future__ import annotations

from rest_framework import serializers

from brokers.gateway.promotion import PROMOTION_ROLES
from brokers.models import PromotionJob
from console.query_filters import ChoiceFilterField, ChoiceSetField
from console.rest import StrictBooleanField, StrictCharField, StrictInputSerializer, StrictIntegerField


class PromoteInput(StrictInputSerializer):
    broker_id = StrictIntegerField(min_value=0, help_text="the slave to promote (its brokerId, >= 1)")
    force = StrictBooleanField(
        required=False,
        default=False,
        help_text="promote even when the candidate lacks acknowledged data or its master is alive",
    )
    dry_run = StrictBooleanField(
        required=False, default=True, help_text="true (default): only ask what the promotion would do and lose"
    )
    role = serializers.ChoiceField(
        choices=PROMOTION_ROLES,
        required=False,
        help_text="the role it takes (default: the role the group's master had)",
    )


class PromotionJobQuery(StrictInputSerializer):
    broker = StrictCharField(required=False, help_text="jobs of this broker group")
    status = ChoiceSetField(choices=PromotionJob.STATUSES, required=False)
    dry_run = ChoiceFilterField(choices=("true", "false"), required=False)
    page = serializers.IntegerField(required=False, min_value=1)
    page_size = serializers.IntegerField(required=False, min_value=1)

    def filters(self) -> dict:
        d = self.validated_data
        return {
            "broker_name": d.get("broker", ""),
            "statuses": d.get("status", frozenset()),
            "dry_run": {"true": True, "false": False}.get(d.get("dry_run", "")),
        }


class PromotionPlanOutput(serializers.Serializer):
    """The candidate's answer (docs/broker-group-promotion.md's contract), in the API's snake_case."""

    broker_name = serializers.CharField()
    broker_id = serializers.IntegerField()
    from_role = serializers.CharField()
    to_role = serializers.CharField()
    dry_run = serializers.BooleanField()
    promoted = serializers.BooleanField()
    epoch = serializers.IntegerField(help_text="the group epoch the candidate knows")
    new_epoch = serializers.IntegerField(help_text="the epoch the promotion raises (raised) it to")
    max_phy_offset = serializers.IntegerField(help_text="the candidate's commit log end")
    known_master_max_offset = serializers.IntegerField(help_text="the master's end, as far as the candidate heard")
    acked_offset = serializers.IntegerField(
        help_text="the highest offset the group acknowledged to producers, as far as it knows"
    )
    missing_acked_bytes = serializers.IntegerField(
        help_text="acknowledged bytes the candidate lacks: lost if it is promoted"
    )
    missing_bytes = serializers.IntegerField(help_text="bytes the master had that the candidate lacks")
    master_reachable = serializers.BooleanField()
    would_lose = serializers.CharField()
    refused = serializers.CharField(help_text="why the real run would be (was) refused; empty when it would not")


class MemberStateOutput(serializers.Serializer):
    broker_id = serializers.IntegerField()
    addr = serializers.CharField()
    status = serializers.CharField()
    role = serializers.CharField()
    epoch = serializers.IntegerField(allow_null=True)
    connection = serializers.CharField(help_text="haConnectionState")
    lag_bytes = serializers.IntegerField(allow_null=True)
    lag_ms = serializers.IntegerField(allow_null=True)
    master_addr = serializers.CharField()


class GroupStateOutput(serializers.Serializer):
    broker_name = serializers.CharField()
    master_addr = serializers.CharField(help_text="brokerId 0's address in the name servers' route")
    epoch = serializers.IntegerField(allow_null=True)
    members = MemberStateOutput(many=True)


class PromotionJobOutput(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    namesrv_set = serializers.CharField(help_text="the name-server set (cluster) the job runs against")
    requested_by = serializers.CharField()
    source = serializers.CharField()
    broker_name = serializers.CharField()
    broker_id = serializers.IntegerField()
    candidate_addr = serializers.CharField()
    role = serializers.CharField(help_text="the requested role; empty: the role of the group's master")
    force = serializers.BooleanField()
    dry_run = serializers.BooleanField()
    status = serializers.CharField(help_text=f"one of {', '.join(PromotionJob.STATUSES)}")
    active = serializers.BooleanField()
    reason = serializers.CharField()
    progress = serializers.CharField()
    summary = serializers.CharField(help_text="what the promotion would do (dry run) or did, in one sentence")
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)
    plan = PromotionPlanOutput(allow_null=True, help_text="the candidate's answer; null until it answered")
    before = GroupStateOutput(help_text="the group when the job was requested")
    after = GroupStateOutput(help_text="the group when an apply ended (empty for dry runs)")

    def get_url(self, job) -> str:
        return f"/api/v1/promotion-jobs/{job.id}"
