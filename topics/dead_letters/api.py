"""/api/v1/groups/{name}/dlq: a consumer group's dead letters (``%DLQ%<name>``).

GET dlq?page=&page_size= (viewer; newest first, nothing consumed), POST dlq/resend {msg_ids: [...]}
(operator; copies to ``%RETRY%<name>``, audited, see topics.dead_letters.services), GET
dlq/export?begin=&end=&limit= (viewer; application/x-ndjson, streamed, at most 10,000 lines).
"""

from __future__ import annotations

import json

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.rest import parse_input, query_dict
from topics.dead_letters.selectors import DeadLetterExport, dead_letter_export, dead_letter_page
from topics.dead_letters.serializers import (
    DeadLetterExportQuery,
    DeadLetterPageOutput,
    DeadLetterQuery,
    DeadLetterResendInput,
    DeadLetterResendOutput,
)
from topics.dead_letters.services import dead_letter_resend

NDJSON = "application/x-ndjson"
NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="consumer group name")


class NdjsonRenderer(BaseRenderer):
    """JSON lines; an error answer (a dict) is one line."""

    media_type = NDJSON
    format = "ndjson"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return b"" if data is None else json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\n"


def export_response(export: DeadLetterExport) -> StreamingHttpResponse:
    """The export as a streamed download named after the group, with the count the range holds."""
    response = StreamingHttpResponse(export.lines(), content_type=NDJSON)
    response["Content-Disposition"] = f'attachment; filename="dlq-{export.group}.ndjson"'
    response["X-Total-Count"] = str(export.total)
    response["X-Export-Limit"] = str(export.limit)
    return response


@extend_schema(tags=["groups"])
class DeadLetterViewSet(viewsets.ViewSet):
    @extend_schema(
        parameters=[NAME, DeadLetterQuery],
        responses=DeadLetterPageOutput,
        description="The group's dead letters, newest first (nothing consumed); an empty page while it has none.",
    )
    def list(self, request: Request, name: str) -> Response:
        q = parse_input(DeadLetterQuery, query_dict(request))
        return Response(
            DeadLetterPageOutput(dead_letter_page(group=name, page=q["page"], page_size=q["page_size"])).data
        )

    @extend_schema(
        parameters=[NAME],
        request=DeadLetterResendInput,
        responses=DeadLetterResendOutput,
        description="Send copies of dead letters to %RETRY%<group> (only this group gets them again); "
        "every id is checked first, then each is sent on its own and reported.",
    )
    @action(detail=False, methods=["post"])
    def resend(self, request: Request, name: str) -> Response:
        data = parse_input(DeadLetterResendInput, request.data)
        return Response(
            DeadLetterResendOutput(
                dead_letter_resend(actor=actor_from_request(request), group=name, msg_ids=data["msg_ids"])
            ).data
        )

    @extend_schema(
        parameters=[NAME, DeadLetterExportQuery],
        responses={(200, NDJSON): OpenApiResponse(OpenApiTypes.STR, description="one JSON object per line")},
        description="The dead letters moved in a time range as JSON lines (queue by queue, oldest first), "
        "whole bodies as text or base64, at most 10,000.",
    )
    @action(detail=False, methods=["get"], renderer_classes=[JSONRenderer, NdjsonRenderer])
    def export(self, request: Request, name: str) -> StreamingHttpResponse:
        q = parse_input(DeadLetterExportQuery, query_dict(request))
        return export_response(
            dead_letter_export(group=name, begin_ms=q.get("begin"), end_ms=q.get("end"), limit=q["limit"])
        )
