"""/api/v1/subscription-groups: subscription groups as first-class objects, each with every master's config.

GET list (viewer; ?search=&kind=user,system&page=&page_size=), POST create (operator; ``cluster`` or
``broker``), GET/PUT/PATCH/DELETE one group (PUT: settings left out take the defaults; PATCH: they
keep each broker's value; DELETE ?cluster= or ?broker= for a part, ?remove_offsets=true to drop the
committed offsets too). The same services as the console pages and ``mqadmin updateSubGroup`` /
``deleteSubGroup``.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http_status
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.rest import paginated_response, parse_input, query_dict, validated
from consumers.subscription_groups import selectors
from consumers.subscription_groups import services
from consumers.subscription_groups.serializers import (
    SubscriptionGroupCreateInput,
    SubscriptionGroupDeleteQuery,
    SubscriptionGroupDeletionOutput,
    SubscriptionGroupListQuery,
    SubscriptionGroupOutput,
    SubscriptionGroupPatchInput,
    SubscriptionGroupReplaceInput,
)

NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="consumer group name (percent-encode % and |)")


@extend_schema(tags=["subscription groups"])
class SubscriptionGroupViewSet(viewsets.ViewSet):
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"

    @extend_schema(parameters=[SubscriptionGroupListQuery], responses=SubscriptionGroupOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(SubscriptionGroupListQuery, query_dict(request))
        groups = selectors.subscription_group_list(search=q.get("search", ""), kinds=q.get("kind"))
        return paginated_response(
            request,
            self,
            groups.rows,
            SubscriptionGroupOutput,
            {"errors": list(groups.errors)} if groups.errors else None,
        )

    @extend_schema(request=SubscriptionGroupCreateInput, responses={201: SubscriptionGroupOutput})
    def create(self, request: Request) -> Response:
        spec = validated(SubscriptionGroupCreateInput, request.data).spec()
        group = services.subscription_group_create(actor=actor_from_request(request), spec=spec)
        return Response(SubscriptionGroupOutput(group).data, status=http_status.HTTP_201_CREATED)

    @extend_schema(parameters=[NAME], responses=SubscriptionGroupOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(SubscriptionGroupOutput(selectors.subscription_group_get(name=name)).data)

    @extend_schema(parameters=[NAME], request=SubscriptionGroupReplaceInput, responses=SubscriptionGroupOutput)
    def update(self, request: Request, name: str) -> Response:
        spec = validated(SubscriptionGroupReplaceInput, request.data).spec(name)
        return Response(
            SubscriptionGroupOutput(
                services.subscription_group_update(actor=actor_from_request(request), spec=spec)
            ).data
        )

    @extend_schema(parameters=[NAME], request=SubscriptionGroupPatchInput, responses=SubscriptionGroupOutput)
    def partial_update(self, request: Request, name: str) -> Response:
        spec = validated(SubscriptionGroupPatchInput, request.data).spec(name)
        return Response(
            SubscriptionGroupOutput(
                services.subscription_group_update(actor=actor_from_request(request), spec=spec)
            ).data
        )

    @extend_schema(parameters=[NAME, SubscriptionGroupDeleteQuery], responses={200: SubscriptionGroupDeletionOutput})
    def destroy(self, request: Request, name: str) -> Response:
        q = parse_input(SubscriptionGroupDeleteQuery, query_dict(request))
        deletion = services.subscription_group_delete(
            actor=actor_from_request(request),
            name=name,
            cluster=q.get("cluster"),
            broker=q.get("broker"),
            remove_offsets=q["remove_offsets"],
        )
        return Response(SubscriptionGroupDeletionOutput(deletion).data)
