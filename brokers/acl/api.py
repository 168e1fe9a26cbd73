"""/api/v1/acl/accounts (GET: every role; POST, PUT /{access_key}, DELETE /{access_key}: admin) and
PUT /api/v1/acl/global-white-addresses (admin). ``?cluster=NAME`` limits reads and changes to one
cluster's brokers (default: every broker the name servers know). Never a secret in an answer."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from brokers.acl import services
from brokers.acl.selectors import acl_overview
from brokers.acl.serializers import (
    AccountInputSerializer,
    AccountOutput,
    AccountUpdateSerializer,
    AclOverviewOutput,
    GlobalWhiteInputSerializer,
)
from console.actor import actor_from_request
from console.errors import Unavailable
from console.rest import parse_input
from console.roles import Role

CLUSTER = OpenApiParameter("cluster", str, description="only this cluster's brokers (default: every broker)")


def _cluster(request: Request) -> str | None:
    return request.query_params.get("cluster") or None


def _account_input(data: dict, access_key: str) -> services.AccountInput:
    return services.AccountInput(
        access_key=access_key,
        secret_key=data.get("secret_key", ""),
        white_remote_address=data["white_remote_address"],
        admin=data["admin"],
        default_topic_perm=data["default_topic_perm"],
        default_group_perm=data["default_group_perm"],
        topic_perms=tuple(data["topic_perms"]),
        group_perms=tuple(data["group_perms"]),
    )


@extend_schema(tags=["acl"])
class AclAccountViewSet(viewsets.ViewSet):
    """The brokers' ACL accounts (RocketMQ plain ACL), without secrets; changes go to every broker."""

    lookup_field = "access_key"
    lookup_value_regex = r"[^/]+"
    write_role = Role.ADMIN

    @extend_schema(parameters=[CLUSTER], responses=AclOverviewOutput)
    def list(self, request: Request) -> Response:
        overview = acl_overview(cluster=_cluster(request))
        if overview.error:
            raise Unavailable(f"the ACL cannot be read: {overview.error}")
        return Response(AclOverviewOutput(overview).data)

    @extend_schema(
        parameters=[CLUSTER],
        request=AccountInputSerializer,
        responses={201: AccountOutput},
        description="Create an account on every broker (UPDATE_AND_CREATE_ACL_CONFIG). 400 naming the field.",
    )
    def create(self, request: Request) -> Response:
        data = parse_input(AccountInputSerializer, request.data)
        account = services.acl_account_save(
            actor=actor_from_request(request),
            data=_account_input(data, data["access_key"]),
            create=True,
            cluster=_cluster(request),
        )
        return Response(AccountOutput(account).data if account else None, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[CLUSTER],
        request=AccountUpdateSerializer,
        responses=AccountOutput,
        description="Update an account on every broker; an absent or empty secret_key keeps the secret.",
    )
    def update(self, request: Request, access_key: str) -> Response:
        data = parse_input(AccountUpdateSerializer, request.data)
        account = services.acl_account_save(
            actor=actor_from_request(request),
            data=_account_input(data, access_key),
            create=False,
            cluster=_cluster(request),
        )
        return Response(AccountOutput(account).data if account else None)

    @extend_schema(
        parameters=[CLUSTER],
        responses={204: None},
        description="Delete an account on every broker (DELETE_ACL_CONFIG).",
    )
    def destroy(self, request: Request, access_key: str) -> Response:
        services.acl_account_delete(actor=actor_from_request(request), access_key=access_key, cluster=_cluster(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["acl"])
class AclGlobalWhiteView(APIView):
    """PUT: replace the global white addresses on every broker (UPDATE_GLOBAL_WHITE_ADDRS_CONFIG)."""

    write_role = Role.ADMIN

    @extend_schema(parameters=[CLUSTER], request=GlobalWhiteInputSerializer, responses=GlobalWhiteInputSerializer)
    def put(self, request: Request) -> Response:
        data = parse_input(GlobalWhiteInputSerializer, request.data)
        after = services.acl_global_white_update(
            actor=actor_from_request(request), addresses=tuple(data["addresses"]), cluster=_cluster(request)
        )
        return Response({"addresses": list(after)})
