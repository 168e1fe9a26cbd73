"""/api/v1/topics: the same services and selectors as the console pages, as JSON.

GET list (viewer; ?search=&type=normal,retry,dlq,system&broker=&ordering=&page=&page_size=),
POST create (operator), GET/PUT/PATCH/DELETE one topic (DELETE ?cluster= or ?broker= for a
part), GET .../status, .../route, .../consumer-groups, .../advice (the queue-count advisor), POST .../messages (a test message), GET .../shrink
(where a safe shrink stands) and POST .../shrink (take a step; operator).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http_status
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.rest import order_by, paginated_response, parse_input, query_dict, validated
from console.schema import ordering_parameter
from console.serializers import AdviceListOutput
from topics import selectors, services
from topics.messages.selectors import message_tail
from topics.serializers import (
    MessageSummaryOutput,
    SentMessageOutput,
    ShrinkInput,
    ShrinkQuery,
    ShrinkStatusOutput,
    TestMessageInput,
    TopicConsumersOutput,
    TopicCreateInput,
    TopicDeleteQuery,
    TopicDeletionOutput,
    TopicListQuery,
    TopicOutput,
    TopicPatchInput,
    TopicReplaceInput,
    TopicRouteOutput,
    TailQuery,
    TopicStatusOutput,
)
from topics.unreachable import CONFIRM_FIELD

NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="topic name (percent-encode % and |)")
ORDERING = {"name": lambda t: t.name, "type": lambda t: (t.type, t.name)}


@extend_schema(tags=["topics"])
class TopicViewSet(viewsets.ViewSet):
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"

    @extend_schema(parameters=[TopicListQuery, ordering_parameter(ORDERING, "name")], responses=TopicOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(TopicListQuery, query_dict(request))
        topics = selectors.topic_list(search=q.get("search", ""), types=q.get("type"), broker=q.get("broker"))
        rows = order_by(topics.rows, q.get("ordering"), ORDERING, "name")
        return paginated_response(
            request, self, rows, TopicOutput, {"errors": list(topics.errors)} if topics.errors else None
        )

    @extend_schema(request=TopicCreateInput, responses={201: TopicOutput})
    def create(self, request: Request) -> Response:
        spec = validated(TopicCreateInput, request.data).spec()
        topic = services.topic_create(actor=actor_from_request(request), spec=spec)
        return Response(TopicOutput(topic).data, status=http_status.HTTP_201_CREATED)

    @extend_schema(parameters=[NAME], responses=TopicOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(TopicOutput(selectors.topic_detail(name=name)).data)

    @extend_schema(parameters=[NAME], request=TopicReplaceInput, responses=TopicOutput)
    def update(self, request: Request, name: str) -> Response:
        data = validated(TopicReplaceInput, request.data, context={"name": name})
        return Response(
            TopicOutput(
                services.topic_update(
                    actor=actor_from_request(request),
                    spec=data.spec(name),
                    confirm_unreachable_messages=data.validated_data.get(CONFIRM_FIELD),
                )
            ).data
        )

    @extend_schema(parameters=[NAME], request=TopicPatchInput, responses=TopicOutput)
    def partial_update(self, request: Request, name: str) -> Response:
        data = validated(TopicPatchInput, request.data, context={"name": name})
        return Response(
            TopicOutput(
                services.topic_update(
                    actor=actor_from_request(request),
                    spec=data.spec(name),
                    confirm_unreachable_messages=data.validated_data.get(CONFIRM_FIELD),
                )
            ).data
        )

    @extend_schema(parameters=[NAME, TopicDeleteQuery], responses={200: TopicDeletionOutput})
    def destroy(self, request: Request, name: str) -> Response:
        q = parse_input(TopicDeleteQuery, query_dict(request))
        deletion = services.topic_delete(
            actor=actor_from_request(request), name=name, cluster=q.get("cluster"), broker=q.get("broker")
        )
        return Response(TopicDeletionOutput(deletion).data)

    @extend_schema(parameters=[NAME], responses=TopicStatusOutput)
    @action(detail=True, methods=["get"])
    def status(self, request: Request, name: str) -> Response:
        return Response(TopicStatusOutput(selectors.topic_status(name=name)).data)

    @extend_schema(parameters=[NAME], responses=TopicRouteOutput)
    @action(detail=True, methods=["get"])
    def route(self, request: Request, name: str) -> Response:
        return Response(TopicRouteOutput(selectors.topic_route(name=name)).data)

    @extend_schema(parameters=[NAME], responses=AdviceListOutput)
    @action(detail=True, methods=["get"])
    def advice(self, request: Request, name: str) -> Response:
        """The queue-count advisor's findings about the topic (read/write mismatch, idle consumers, hot brokers,
        skewed queues), each with the change it suggests."""
        return Response(AdviceListOutput({"name": name, "advice": selectors.topic_advice(name=name)}).data)

    @extend_schema(parameters=[NAME], responses=TopicConsumersOutput)
    @action(detail=True, methods=["get"], url_path="consumer-groups")
    def consumer_groups(self, request: Request, name: str) -> Response:
        return Response(TopicConsumersOutput(selectors.topic_consumers(name=name)).data)

    @extend_schema(
        parameters=[NAME, TailQuery],
        responses=MessageSummaryOutput(many=True),
        description="The topic's newest messages over all its queues, newest first (a live tail; nothing consumed).",
    )
    @action(detail=True, methods=["get"])
    def tail(self, request: Request, name: str) -> Response:
        q = parse_input(TailQuery, query_dict(request))
        return Response(MessageSummaryOutput(message_tail(topic=name, count=q["count"]).messages, many=True).data)

    @extend_schema(parameters=[NAME], request=TestMessageInput, responses={201: SentMessageOutput})
    @action(detail=True, methods=["post"])
    def messages(self, request: Request, name: str) -> Response:
        data = parse_input(TestMessageInput, request.data)
        sent = services.topic_send_test_message(actor=actor_from_request(request), name=name, **data)
        return Response(SentMessageOutput(sent).data, status=http_status.HTTP_201_CREATED)

    @extend_schema(
        methods=["GET"],
        parameters=[NAME, ShrinkQuery],
        responses=ShrinkStatusOutput,
        description="Where a safe shrink stands: tail queues, each group's offset and lag in them.",
    )
    @extend_schema(
        methods=["POST"],
        parameters=[NAME],
        request=ShrinkInput,
        responses=ShrinkStatusOutput,
        description="Take a step: write (lower the write queues), then read (once the tail queues are drained).",
    )
    @action(detail=True, methods=["get", "post"])
    def shrink(self, request: Request, name: str) -> Response:
        if request.method == "GET":
            q = parse_input(ShrinkQuery, query_dict(request))
            return Response(
                ShrinkStatusOutput(
                    selectors.topic_shrink_status(name=name, target_queue_nums=q.get("target_queue_nums"))
                ).data
            )
        data = parse_input(ShrinkInput, request.data)
        return Response(
            ShrinkStatusOutput(services.topic_shrink(actor=actor_from_request(request), name=name, **data)).data
        )
