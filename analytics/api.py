"""/api/v1/dashboards: the JSON behind every dashboard chart, and refreshing it.

GET dashboards/throughput (?range=hour|day|week&by=topic|broker|queue&topic=&broker=&resolution=),
GET dashboards/backlog (?range=&by=group|queue&group=&topic=&resolution=), both for viewers;
POST dashboards/refresh (operator): 202 with the new run, or 200 with the run already queued or
running; GET dashboards/refresh-runs/{id}. Shapes: docs/analytics.md section 4.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http_status
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from analytics import selectors, services
from analytics.models import RefreshRun
from analytics.serializers import (
    BacklogOutput,
    BacklogQuery,
    RefreshInput,
    RefreshRunOutput,
    ThroughputOutput,
    ThroughputQuery,
)
from console.actor import actor_from_request
from console.rest import parse_input, query_dict


def _filters(q: dict, *names: str) -> dict:
    return {name: q.get(name) or None for name in names}


@extend_schema(tags=["dashboards"])
class DashboardViewSet(viewsets.ViewSet):
    @extend_schema(parameters=[ThroughputQuery], responses=ThroughputOutput)
    @action(detail=False, methods=["get"])
    def throughput(self, request: Request) -> Response:
        q = parse_input(ThroughputQuery, query_dict(request))
        return Response(
            selectors.throughput_view(
                range=q["range"], by=q["by"], system=q["system"], **_filters(q, "topic", "broker", "resolution")
            )
        )

    @extend_schema(parameters=[BacklogQuery], responses=BacklogOutput)
    @action(detail=False, methods=["get"])
    def backlog(self, request: Request) -> Response:
        q = parse_input(BacklogQuery, query_dict(request))
        return Response(
            selectors.backlog_view(range=q["range"], by=q["by"], **_filters(q, "group", "topic", "resolution"))
        )

    @extend_schema(
        request=RefreshInput,
        responses={202: RefreshRunOutput, 200: RefreshRunOutput},
        description="Refresh the dashboards now (operator): 202 with the queued run, or 200 with the run "
        "already queued or running. 503 when the task queue (Redis) is down.",
    )
    @action(detail=False, methods=["post"])
    def refresh(self, request: Request) -> Response:
        parse_input(RefreshInput, request.data or {})
        run = services.dashboard_refresh_request(actor=actor_from_request(request), trigger=RefreshRun.Trigger.API)
        status = http_status.HTTP_202_ACCEPTED if run.is_new else http_status.HTTP_200_OK
        return Response(selectors.run_json(run), status=status)


@extend_schema(tags=["dashboards"])
class RefreshRunViewSet(viewsets.ViewSet):
    lookup_value_regex = r"\d+"

    @extend_schema(
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="refresh run id")],
        responses=RefreshRunOutput,
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(selectors.refresh_run(run_id=int(pk)))
