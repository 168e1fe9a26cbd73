"""/api/v1/clusters, /api/v1/brokers, /api/v1/broker-groups, /api/v1/namesrvs, /api/v1/alerts: the
overview as JSON; GET /api/v1/brokers/{name}/runtime: each member's runtime status (mqadmin brokerStatus);
POST /api/v1/brokers/{name}/promote and /api/v1/promotion-jobs: promotion jobs.

Each overview endpoint is one read of :func:`brokers.gateway.overview.broker_overview` (a name
server that does not answer makes clusters and brokers a 503; name servers and alerts still
answer). Promotion shapes are in brokers/promotion/serializers.py (docs/promotion-jobs.md).
"""

from __future__ import annotations

import time

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from brokers.gateway.broker_config import group_configs
from brokers.gateway.producers import all_producer_groups
from brokers.gateway.runtime_status import member_runtimes
from brokers.gateway.overview import BrokerOverview, broker_group, broker_overview
from brokers.promotion import jobs as promotion_jobs
from brokers.promotion import selectors as promotion_selectors
from brokers.promotion.serializers import PromoteInput, PromotionJobOutput, PromotionJobQuery
from brokers.serializers import (
    AlertOutput,
    BrokerGroupConfigOutput,
    BrokerRuntimeOutput,
    ProducerGroupsOutput,
    BrokerGroupOutput,
    BrokerListQuery,
    BrokerOutput,
    ClusterOutput,
    NamesrvOutput,
)
from console.actor import actor_from_request
from console.errors import NamesrvUnreachable, NotFound
from console.rest import paginated_response, parse_input, query_dict, validated
from console.roles import Role

NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="broker name (the group's)")


def _reachable_overview() -> BrokerOverview:
    overview = broker_overview()
    if overview.error:
        raise NamesrvUnreachable(overview.error)
    return overview


@extend_schema(tags=["cluster"])
class ClusterViewSet(viewsets.ViewSet):
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"

    @extend_schema(responses=ClusterOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, _reachable_overview().clusters, ClusterOutput)

    @extend_schema(parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH)], responses=ClusterOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        cluster = next((c for c in _reachable_overview().clusters if c.name == name), None)
        if cluster is None:
            raise NotFound(f"cluster {name} is not known to the name servers")
        return Response(ClusterOutput(cluster).data)


@extend_schema(tags=["cluster"])
class BrokerViewSet(viewsets.ViewSet):
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"
    action_roles = {"promote": Role.ADMIN}

    @extend_schema(parameters=[BrokerListQuery], responses=BrokerOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(BrokerListQuery, query_dict(request))
        rows = _reachable_overview().brokers
        if q.get("cluster"):
            rows = tuple(r for r in rows if r.cluster == q["cluster"])
        if q.get("status"):
            rows = tuple(r for r in rows if r.status == q["status"])
        return paginated_response(request, self, rows, BrokerOutput)

    @extend_schema(
        parameters=[NAME],
        request=PromoteInput,
        responses={202: PromotionJobOutput, 200: PromotionJobOutput},
        description="Promote a slave of the group to master (admin), as a job: a dry run (the default) asks the "
        "candidate what the promotion would do and lose; dry_run false promotes it. 202 with the new job, "
        "200 with the job already active for the group; 400 naming the field, 404 an unknown broker, "
        "409 a candidate that is not a live slave, 503 queue_unavailable when Redis is down.",
    )
    @action(detail=True, methods=["post"])
    def promote(self, request: Request, name: str) -> Response:
        data = parse_input(PromoteInput, request.data)
        triggered = promotion_jobs.promotion_trigger(
            actor=actor_from_request(request),
            broker_name=name,
            broker_id=data["broker_id"],
            force=data["force"],
            dry_run=data["dry_run"],
            role=data.get("role"),
        )
        return Response(
            PromotionJobOutput(triggered.job).data,
            status=status.HTTP_202_ACCEPTED if triggered.created else status.HTTP_200_OK,
        )

    @extend_schema(
        parameters=[NAME],
        responses=BrokerRuntimeOutput,
        description="Each member's runtime status (GET_BROKER_RUNTIME_INFO, mqadmin brokerStatus), typed: TPS, "
        "today's message counts, commit log disk ratio, page cache lock time, bytes to flush, version, "
        "uptime. A member that does not answer has available false and the error; 404 an unknown broker.",
    )
    @action(detail=True, methods=["get"])
    def runtime(self, request: Request, name: str) -> Response:
        group = broker_group(name)
        members = member_runtimes(((m.broker_id, m.addr) for m in group.members), int(time.time() * 1000))
        return Response(BrokerRuntimeOutput({"broker_name": name, "members": members}).data)


@extend_schema(tags=["cluster"])
class BrokerGroupViewSet(viewsets.ViewSet):
    """Broker groups: master and slaves of each broker name, with roles, epochs, HA links and lag."""

    lookup_field = "name"
    lookup_value_regex = r"[^/]+"

    @extend_schema(responses=BrokerGroupOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, _reachable_overview().groups, BrokerGroupOutput)

    @extend_schema(parameters=[NAME], responses=BrokerGroupOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(BrokerGroupOutput(broker_group(name)).data)

    @extend_schema(
        parameters=[NAME],
        responses=BrokerGroupConfigOutput,
        description="Each member's configuration as it reports it (GET_BROKER_CONFIG, mqadmin getBrokerConfig); read only.",
    )
    @action(detail=True, methods=["get"])
    def config(self, request: Request, name: str) -> Response:
        group = broker_group(name)
        return Response(BrokerGroupConfigOutput({"broker_name": name, "members": group_configs(group.members)}).data)


@extend_schema(tags=["promotion jobs"])
class PromotionJobViewSet(viewsets.ViewSet):
    """Promotions as recorded jobs: list (filters) and one. Create one with POST brokers/{name}/promote."""

    lookup_value_regex = r"[0-9]+"

    @extend_schema(parameters=[PromotionJobQuery], responses=PromotionJobOutput(many=True))
    def list(self, request: Request) -> Response:
        filters = validated(PromotionJobQuery, query_dict(request)).filters()
        return paginated_response(
            request,
            self,
            promotion_selectors.promotion_job_list(**filters),
            PromotionJobOutput,
            prepare=promotion_selectors.job_views,
        )

    @extend_schema(responses=PromotionJobOutput)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(PromotionJobOutput(promotion_selectors.promotion_job_get(job_id=int(pk))).data)


@extend_schema(tags=["cluster"])
class NamesrvViewSet(viewsets.ViewSet):
    @extend_schema(responses=NamesrvOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, broker_overview().namesrvs, NamesrvOutput)


@extend_schema(tags=["cluster"])
class AlertViewSet(viewsets.ViewSet):
    @extend_schema(responses=AlertOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, broker_overview().alerts, AlertOutput)


@extend_schema(tags=["producers"])
class ProducerViewSet(viewsets.ViewSet):
    """Producer groups and their connected clients, as the masters know them from heartbeats."""

    @extend_schema(
        responses=ProducerGroupsOutput,
        description="Every producer group with its clients (GET_ALL_PRODUCER_INFO on each master, merged).",
    )
    def list(self, request: Request) -> Response:
        return Response(ProducerGroupsOutput(all_producer_groups()).data)
