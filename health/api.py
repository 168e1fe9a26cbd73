"""/api/v1/alert-rules and /api/v1/alert-events: alert rules (CRUD, silence) and their history
(list, acknowledge). Reading needs a viewer, changing an operator; every change is audited."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.errors import InvalidInput
from console.rest import paginated_response, parse_input, query_dict
from health import services as alert_services
from health.models import AlertRule
from health.serializers import (
    AlertEventOutput,
    AlertEventQuery,
    AlertRuleInput,
    AlertRuleOutput,
    EnableInput,
    SilenceInput,
)

ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="the rule's or event's id")


def _id(pk: str) -> int:
    if not pk.isdigit() or len(pk) > 12:
        raise InvalidInput("id", "must be a whole number.")
    return int(pk)


def _rule_input(data: dict) -> alert_services.RuleInput:
    return alert_services.RuleInput(
        name=data["name"] or f"{data['kind']} {data['target']}".strip(),
        kind=data["kind"],
        target=data["target"],
        threshold=data["threshold"],
        for_minutes=data["for_minutes"],
        webhook_url=data["webhook_url"],
        emails=tuple(data["emails"]),
        enabled=data["enabled"],
        namesrv_set=data.get("namesrv_set"),
    )


@extend_schema(tags=["alerts"])
class AlertRuleViewSet(viewsets.ViewSet):
    """Rules the health scan evaluates (docs/alerts.md)."""

    lookup_value_regex = r"[^/]+"

    @extend_schema(responses=AlertRuleOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, list(AlertRule.objects.all()), AlertRuleOutput)

    @extend_schema(request=AlertRuleInput, responses={201: AlertRuleOutput})
    def create(self, request: Request) -> Response:
        data = parse_input(AlertRuleInput, request.data)
        rule = alert_services.alert_rule_save(actor=actor_from_request(request), data=_rule_input(data))
        return Response(AlertRuleOutput(rule).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[ID], responses=AlertRuleOutput)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(AlertRuleOutput(alert_services.alert_rule_get(rule_id=_id(pk))).data)

    @extend_schema(
        parameters=[ID],
        request=AlertRuleInput,
        responses=AlertRuleOutput,
        description="Replace the rule; a changed kind, target or threshold starts its evaluation afresh.",
    )
    def update(self, request: Request, pk: str) -> Response:
        rule_id = _id(pk)
        data = parse_input(AlertRuleInput, request.data)
        rule = alert_services.alert_rule_save(
            actor=actor_from_request(request), data=_rule_input(data), rule_id=rule_id
        )
        return Response(AlertRuleOutput(rule).data)

    @extend_schema(
        parameters=[ID],
        responses={200: AlertRuleOutput},
        description="Delete the rule; its events stay in the history.",
    )
    def destroy(self, request: Request, pk: str) -> Response:
        return Response(
            AlertRuleOutput(alert_services.alert_rule_delete(actor=actor_from_request(request), rule_id=_id(pk))).data
        )

    @extend_schema(
        parameters=[ID],
        request=SilenceInput,
        responses=AlertRuleOutput,
        description="Silence the rule for `minutes` (0 ends it): events are still recorded, nothing is sent.",
    )
    @action(detail=True, methods=["post"])
    def silence(self, request: Request, pk: str) -> Response:
        rule_id = _id(pk)
        data = parse_input(SilenceInput, request.data)
        rule = alert_services.alert_rule_silence(
            actor=actor_from_request(request), rule_id=rule_id, minutes=data["minutes"]
        )
        return Response(AlertRuleOutput(rule).data)

    @extend_schema(
        parameters=[ID],
        request=EnableInput,
        responses=AlertRuleOutput,
        description="Enable or disable the rule (a default rule is disabled rather than deleted).",
    )
    @action(detail=True, methods=["post"])
    def enable(self, request: Request, pk: str) -> Response:
        rule_id = _id(pk)
        data = parse_input(EnableInput, request.data)
        rule = alert_services.alert_rule_enable(
            actor=actor_from_request(request), rule_id=rule_id, enabled=data["enabled"]
        )
        return Response(AlertRuleOutput(rule).data)


@extend_schema(tags=["alerts"])
class AlertEventViewSet(viewsets.ViewSet):
    """The alert history: each rule's firing and resolved events with what each channel answered."""

    lookup_value_regex = r"[^/]+"

    @extend_schema(parameters=[AlertEventQuery], responses=AlertEventOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(AlertEventQuery, query_dict(request))
        return paginated_response(
            request,
            self,
            alert_services.alert_event_list(rule_id=q.get("rule"), state=q.get("state", "")),
            AlertEventOutput,
        )

    @extend_schema(parameters=[ID], responses=AlertEventOutput)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(AlertEventOutput(alert_services.alert_event_get(event_id=_id(pk))).data)

    @extend_schema(
        parameters=[ID],
        request=None,
        responses=AlertEventOutput,
        description="Acknowledge a firing event (operator): no reminders for it; the resolution is still sent.",
    )
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str) -> Response:
        event = alert_services.alert_event_acknowledge(actor=actor_from_request(request), event_id=_id(pk))
        return Response(AlertEventOutput(event).data)
