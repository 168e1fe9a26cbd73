"""/api/v1/messages: find stored messages by key or by store-time range, and read one by id.

GET messages?topic=&key=[&begin=&end=] (by key) or ?topic=&begin=&end=&page=&page_size= (by
time); both newest first. GET messages/{msg_id}[?topic=] (an offset message id, or a client-made
id, UNIQ_KEY, with its topic). GET messages/{msg_id}/trace[?trace_topic=] (the message's trace:
topics.traces.selectors; {msg_id} may be a key too). Viewers may: nothing is consumed.
GET messages/{msg_id}/track[?topic=]: each group of the topic and its consume state for the message
(topics.messages.track). POST messages/{msg_id}/resend {group, client_id[, topic]} [operator, audited]: the
client consumes the message once (CONSUME_MESSAGE_DIRECTLY); the answer is its result.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from console.actor import actor_from_request
from console.rest import parse_input, query_dict
from topics.messages import selectors as message_selectors
from topics.messages.resend import message_resend
from topics.messages.track import message_track
from topics.messages.track_serializers import MessageResendInput, MessageResendOutput, MessageTrackOutput
from topics.serializers import MessageIdQuery, MessageOutput, MessageQuery, MessageSummaryOutput
from topics.traces.selectors import message_trace
from topics.traces.serializers import MessageTraceOutput, TraceQuery
from topics.types import MessageList

MSG_ID = OpenApiParameter(
    "msg_id", str, OpenApiParameter.PATH, description="offset message id, or UNIQ_KEY with ?topic="
)


def _page_url(request: Request, found: MessageList, page: int) -> str | None:
    if found.key is not None or not 1 <= page <= found.pages:
        return None
    return replace_query_param(request.build_absolute_uri(), "page", page)


@extend_schema(tags=["messages"])
class MessageViewSet(viewsets.ViewSet):
    lookup_field = "msg_id"
    lookup_value_regex = r"[^/]+"

    @extend_schema(parameters=[MessageQuery], responses=MessageSummaryOutput(many=True))
    def list(self, request: Request) -> Response:
        q = parse_input(MessageQuery, query_dict(request))
        if "key" in q:
            found = message_selectors.message_query_by_key(
                topic=q["topic"], key=q["key"], begin_ms=q.get("begin"), end_ms=q.get("end")
            )
        else:
            found = message_selectors.message_query_by_time(
                topic=q["topic"], begin_ms=q["begin"], end_ms=q["end"], page=q["page"], page_size=q["page_size"]
            )
        return Response(
            {
                "count": found.total,
                "next": _page_url(request, found, found.page + 1),
                "previous": _page_url(request, found, found.page - 1),
                "results": MessageSummaryOutput(found.messages, many=True).data,
            }
        )

    @extend_schema(parameters=[MSG_ID, MessageIdQuery], responses=MessageOutput)
    def retrieve(self, request: Request, msg_id: str) -> Response:
        q = parse_input(MessageIdQuery, query_dict(request))
        return Response(MessageOutput(message_selectors.message_detail(msg_id=msg_id, topic=q.get("topic"))).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("msg_id", str, OpenApiParameter.PATH, description="message id (UNIQ_KEY) or key"),
            TraceQuery,
        ],
        responses=MessageTraceOutput,
    )
    @action(detail=True, methods=["get"])
    def trace(self, request: Request, msg_id: str) -> Response:
        """The message's trace: who sent it, where it was stored, which consumers got it, result and cost."""
        q = parse_input(TraceQuery, query_dict(request))
        return Response(MessageTraceOutput(message_trace(msg_id=msg_id, trace_topic=q["trace_topic"])).data)

    @extend_schema(parameters=[MSG_ID, MessageIdQuery], responses=MessageTrackOutput)
    @action(detail=True, methods=["get"])
    def track(self, request: Request, msg_id: str) -> Response:
        """Each consumer group of the message's topic and its consume state for the message (rocketmq-dashboard's message track)."""
        q = parse_input(MessageIdQuery, query_dict(request))
        return Response(MessageTrackOutput(message_track(msg_id=msg_id, topic=q.get("topic"))).data)

    @extend_schema(parameters=[MSG_ID], request=MessageResendInput, responses=MessageResendOutput)
    @action(detail=True, methods=["post"])
    def resend(self, request: Request, msg_id: str) -> Response:
        """Have one online client of a push group consume the message once (CONSUME_MESSAGE_DIRECTLY); its answer. Operator; audited."""
        data = parse_input(MessageResendInput, request.data)
        done = message_resend(
            actor=actor_from_request(request),
            msg_id=msg_id,
            topic=data.get("topic"),
            group=data["group"],
            client_id=data["client_id"],
        )
        return Response(MessageResendOutput(done).data)
