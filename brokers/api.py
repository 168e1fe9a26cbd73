"""/api/v1/clusters, /api/v1/brokers, /api/v1/namesrvs, /api/v1/alerts: the overview as JSON.

Each is one read of :func:`brokers.gateway.overview.broker_overview` (a name server that does not
answer makes clusters and brokers a 503; name servers and alerts still answer).
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from brokers.gateway.overview import BrokerOverview, broker_overview
from brokers.serializers import AlertOutput, BrokerOutput, ClusterOutput, NamesrvOutput
from console.errors import NamesrvUnreachable, NotFound
from console.rest import paginated_response


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
    @extend_schema(
        parameters=[OpenApiParameter("cluster", str, description="only brokers of this cluster"),
                    OpenApiParameter("status", str, description="live, not answering, expired")],
        responses=BrokerOutput(many=True),
    )
    def list(self, request: Request) -> Response:
        rows = _reachable_overview().brokers
        if request.query_params.get("cluster"):
            rows = tuple(r for r in rows if r.cluster == request.query_params["cluster"])
        if request.query_params.get("status"):
            rows = tuple(r for r in rows if r.status == request.query_params["status"])
        return paginated_response(request, self, rows, BrokerOutput)


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
