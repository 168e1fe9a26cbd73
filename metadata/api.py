"""/api/v1/metadata: export and import of topic and subscription-group definitions (RocketMQ's exportMetadata JSON).

GET export?cluster=&broker=&include_special= (viewer; a download, merged across the masters in scope),
POST dry-run {cluster|broker, metadata} (viewer; what the import would do, nothing written), POST apply
{cluster|broker, metadata, plan_id} (operator; writes the dry run's creates and updates, audited).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.rest import parse_input, query_dict
from console.roles import Role
from metadata.selectors import metadata_export, metadata_plan, metadata_scope
from metadata.serializers import ImportPlanOutput, MetadataApplyInput, MetadataExportQuery, MetadataImportInput
from metadata.services import metadata_import


def export_filename(scope_label: str, export_time: int) -> str:
    return f"metadata-{scope_label.replace(' ', '-')}-{export_time}.json"


@extend_schema(tags=["metadata"])
class MetadataViewSet(viewsets.ViewSet):
    action_roles = {"dry_run": Role.VIEWER, "apply": Role.OPERATOR}

    @extend_schema(
        parameters=[MetadataExportQuery],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="topicConfigTable, subscriptionGroupTable, exportTime"
            )
        },
        description="Topics and subscription groups as RocketMQ's exportMetadata JSON, as a download; system ones left out.",
    )
    @action(detail=False, methods=["get"])
    def export(self, request: Request) -> Response:
        q = parse_input(MetadataExportQuery, query_dict(request))
        scope = metadata_scope(cluster=q.get("cluster"), broker=q.get("broker"))
        document = metadata_export(scope=scope, include_special=q["include_special"])
        response = Response(document)
        response["Content-Disposition"] = (
            f'attachment; filename="{export_filename(scope.label, document["exportTime"])}"'
        )
        return response

    @extend_schema(
        request=MetadataImportInput,
        responses=ImportPlanOutput,
        description="The dry run of an import: per topic and group create, update (each broker's changed "
        "properties) or unchanged, and what is skipped. Nothing is written.",
    )
    @action(detail=False, methods=["post"], url_path="dry-run")
    def dry_run(self, request: Request) -> Response:
        data = parse_input(MetadataImportInput, request.data)
        scope = metadata_scope(cluster=data.get("cluster"), broker=data.get("broker"), default_all=False)
        return Response(ImportPlanOutput(metadata_plan(document=data["metadata"], scope=scope)).data)

    @extend_schema(
        request=MetadataApplyInput,
        responses=ImportPlanOutput,
        description="Apply the dry run named by plan_id (409 when the plan differs now): creates and updates, "
        "never deletes or shrinks; one audit entry.",
    )
    @action(detail=False, methods=["post"])
    def apply(self, request: Request) -> Response:
        data = parse_input(MetadataApplyInput, request.data)
        scope = metadata_scope(cluster=data.get("cluster"), broker=data.get("broker"), default_all=False)
        plan = metadata_import(
            actor=actor_from_request(request), document=data["metadata"], scope=scope, plan_id=data["plan_id"]
        )
        return Response(ImportPlanOutput(plan, context={"applied": True}).data)
