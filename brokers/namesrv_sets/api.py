"""/api/v1/namesrv-sets: the tiers the console can talk to (GET: every role; POST, PUT /{name}, DELETE /{name}:
admin). Any other call takes ``?namesrv_set=NAME`` to run against that tier (brokers.namesrv_set_scope)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from brokers.namesrv_sets import services
from brokers.namesrv_sets.serializers import NamesrvSetInputSerializer, NamesrvSetOutput, NamesrvSetUpdateSerializer
from console.actor import actor_from_request
from console.rest import paginated_response, parse_input
from console.roles import Role


def _input(data: dict, name: str) -> services.NamesrvSetInput:
    return services.NamesrvSetInput(
        name=name,
        namesrv_addr=data["namesrv_addr"],
        access_key=data["access_key"],
        secret_key=data["secret_key"],
        tls=data["tls"],
        position=data["position"],
    )


@extend_schema(tags=["namesrv-sets"])
class NamesrvSetViewSet(viewsets.ViewSet):
    """Name-server sets: ``default`` (settings.MQ's) first, then the admin's; never a secret key."""

    lookup_field = "name"
    lookup_value_regex = r"[^/]+"
    write_role = Role.ADMIN

    @extend_schema(responses=NamesrvSetOutput(many=True))
    def list(self, request: Request) -> Response:
        return paginated_response(request, self, services.namesrv_set_list(), NamesrvSetOutput)

    @extend_schema(responses=NamesrvSetOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(NamesrvSetOutput(services.namesrv_set_get(name)).data)

    @extend_schema(
        request=NamesrvSetInputSerializer,
        responses={201: NamesrvSetOutput},
        description="Add a set. 400 naming the field (name, namesrv_addr, access_key, secret_key, position).",
    )
    def create(self, request: Request) -> Response:
        data = parse_input(NamesrvSetInputSerializer, request.data)
        made = services.namesrv_set_create(actor=actor_from_request(request), data=_input(data, data["name"]))
        return Response(NamesrvSetOutput(made).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=NamesrvSetUpdateSerializer,
        responses=NamesrvSetOutput,
        description="Change a set (not default); an empty secret_key keeps the stored one for the same access_key.",
    )
    def update(self, request: Request, name: str) -> Response:
        data = parse_input(NamesrvSetUpdateSerializer, request.data)
        return Response(
            NamesrvSetOutput(
                services.namesrv_set_update(actor=actor_from_request(request), name=name, data=_input(data, name))
            ).data
        )

    @extend_schema(responses={204: None}, description="Remove a set (not default).")
    def destroy(self, request: Request, name: str) -> Response:
        services.namesrv_set_delete(actor=actor_from_request(request), name=name)
        return Response(status=status.HTTP_204_NO_CONTENT)
