"""/api/v1/groups and /api/v1/allocation: the same selectors and services as the console pages.

GET groups (?search=&kind=user,system&ordering=&page=&page_size=), GET groups/{name},
GET groups/{name}/progress (?topic=), GET groups/{name}/reset-offset (?topic=&to=&timestamp=: the
plan, nothing changes) and POST (apply; operator), GET groups/{name}/allocation (?topic=: the
live check), GET groups/{name}/pop-state (5.x POP deliveries in flight); POST allocation/preview
and allocation/compare (viewers may: they change nothing); POST groups/{name}/rebalance, GET/POST
rebalance-jobs, GET rebalance-jobs/{id} (shapes in consumers/rebalance/serializers.py; docs/rebalance.md).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from console.actor import actor_from_request
from console.rest import order_by, paginated_response, parse_input, query_dict, validated
from console.roles import Role
from console.schema import ordering_parameter
from console.serializers import AdviceListOutput
from consumers import selectors, services
from consumers.advisor import group_advice
from consumers.rebalance import jobs as rebalance_jobs
from consumers.rebalance import selectors as rebalance_selectors
from consumers.rebalance.serializers import (
    RebalanceInput,
    RebalanceJobDetailOutput,
    RebalanceJobInput,
    RebalanceJobOutput,
    RebalanceJobQuery,
)
from consumers.rebalance.types import Triggered
from consumers.pop_state import group_pop_state_read
from consumers.pop_state_serializers import GroupPopStateOutput
from consumers.running_info_serializers import ClientRunningInfoOutput
from consumers.reset_serializers import OffsetResetOutput, ResetOffsetInput
from consumers.serializers import (
    AllocationCompareInput,
    AllocationOutput,
    AllocationPreviewInput,
    CompareOutput,
    GroupAllocationOutput,
    GroupDetailOutput,
    GroupListQuery,
    GroupProgressOutput,
    GroupRowOutput,
    GroupRowsOutput,
    ProgressQuery,
)

NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, description="consumer group name")
CLIENT_ID = OpenApiParameter(
    "client_id", str, OpenApiParameter.PATH, description="client id of an online member (as the group lists it)"
)
ORDERING = selectors.GROUP_ORDERING


def _triggered(t: Triggered) -> Response:
    """202 for a new job, 200 for the job already active for the scope (same body)."""
    return Response(
        RebalanceJobDetailOutput(t.job).data, status=status.HTTP_202_ACCEPTED if t.created else status.HTTP_200_OK
    )


@extend_schema(tags=["consumer groups"])
class GroupViewSet(viewsets.ViewSet):
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"
    action_roles = {"rebalance": Role.OPERATOR}

    @extend_schema(
        parameters=[GroupListQuery, ordering_parameter(ORDERING, "name")], responses=GroupRowOutput(many=True)
    )
    def list(self, request: Request) -> Response:
        q = parse_input(GroupListQuery, query_dict(request))
        groups = selectors.group_list(search=q.get("search", ""), kinds=q.get("kind"))
        rows = order_by(groups.rows, q.get("ordering"), ORDERING, "name")
        return paginated_response(
            request,
            self,
            rows,
            GroupRowsOutput,
            {"errors": list(groups.errors)} if groups.errors else None,
            prepare=lambda page: selectors.with_members(page, groups.asked),
        )

    @extend_schema(parameters=[NAME], responses=GroupDetailOutput)
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(GroupDetailOutput(selectors.group_detail(name=name)).data)

    @extend_schema(parameters=[NAME], responses=AdviceListOutput)
    @action(detail=True, methods=["get"])
    def advice(self, request: Request, name: str) -> Response:
        """The queue-count advisor's findings about the group (idle members, unowned queues, lag on one queue)."""
        return Response(
            AdviceListOutput({"name": name, "advice": group_advice(selectors.group_detail(name=name))}).data
        )

    @extend_schema(parameters=[NAME, ProgressQuery], responses=GroupProgressOutput)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, name: str) -> Response:
        q = parse_input(ProgressQuery, query_dict(request))
        return Response(GroupProgressOutput(selectors.group_progress(name=name, topic=q.get("topic"))).data)

    @extend_schema(
        methods=["GET"],
        parameters=[NAME, ResetOffsetInput],
        responses=OffsetResetOutput,
        description="The plan of a reset: each queue's offset before and after. Nothing changes.",
    )
    @extend_schema(
        methods=["POST"],
        parameters=[NAME],
        request=ResetOffsetInput,
        responses=OffsetResetOutput,
        description="Reset the group's offsets of a topic (operator): to a time, now, the earliest or latest offset, "
        "or one queue's offset (offline groups).",
    )
    @action(detail=True, methods=["get", "post"], url_path="reset-offset")
    def reset_offset(self, request: Request, name: str) -> Response:
        if request.method == "GET":
            q = parse_input(ResetOffsetInput, query_dict(request))
            plan = selectors.group_offset_reset_plan(name=name, topic=q["topic"], target=q["target"])
            return Response(OffsetResetOutput(plan).data)
        data = parse_input(ResetOffsetInput, request.data)
        done = services.group_reset_offset(
            actor=actor_from_request(request), group=name, topic=data["topic"], target=data["target"]
        )
        return Response(OffsetResetOutput(done).data)

    @extend_schema(
        parameters=[NAME, CLIENT_ID],
        responses=ClientRunningInfoOutput,
        description="A member's running info (GET_CONSUMER_RUNNING_INFO): its subscriptions, settings, per-topic consume "
        "RT and TPS, per-queue process queues. 404 when the client is not an online member, 503 when it "
        "cannot answer (older than V3_1_8) or does not answer in time.",
    )
    @action(detail=True, methods=["get"], url_path=r"clients/(?P<client_id>[^/]+)/running-info")
    def running_info(self, request: Request, name: str, client_id: str) -> Response:
        return Response(ClientRunningInfoOutput(selectors.client_running_info(name=name, client_id=client_id)).data)

    @extend_schema(
        parameters=[NAME],
        responses=GroupPopStateOutput,
        description="RocketMQ 5's message-level consumption (POP, the 5.x clients'): per queue on each master the "
        "next cursor and the deliveries in flight (at most 200 listed per broker, truncated says so).",
    )
    @action(detail=True, methods=["get"], url_path="pop-state")
    def pop_state(self, request: Request, name: str) -> Response:
        return Response(GroupPopStateOutput(group_pop_state_read(name=name)).data)

    @extend_schema(parameters=[NAME, ProgressQuery], responses=GroupAllocationOutput)
    @action(detail=True, methods=["get"])
    def allocation(self, request: Request, name: str) -> Response:
        q = parse_input(ProgressQuery, query_dict(request))
        checks = selectors.group_live_checks(name=name, topic=q.get("topic"))
        return Response(GroupAllocationOutput({"group": name, "topics": checks}).data)

    @extend_schema(
        parameters=[NAME],
        request=RebalanceInput,
        responses={202: RebalanceJobDetailOutput, 200: RebalanceJobDetailOutput},
        description="Rebalance the group (operator): a dry run (default) records the expected movement; "
        "dry_run false makes the brokers notify the members and waits for convergence. "
        "202 with the new job, 200 with the job already active; 503 queue_unavailable when Redis is down.",
    )
    @action(detail=True, methods=["post"])
    def rebalance(self, request: Request, name: str) -> Response:
        data = parse_input(RebalanceInput, request.data)
        return _triggered(
            rebalance_jobs.rebalance_trigger(
                actor=actor_from_request(request),
                scope="group",
                value=name,
                dry_run=data["dry_run"],
                timeout_s=data.get("timeout_s"),
            )
        )


@extend_schema(tags=["rebalance jobs"])
class RebalanceJobViewSet(viewsets.ViewSet):
    """Rebalance triggers as recorded jobs: list (filters), one (with groups and queue rows), create (operator)."""

    lookup_value_regex = r"[0-9]+"

    @extend_schema(parameters=[RebalanceJobQuery], responses=RebalanceJobOutput(many=True))
    def list(self, request: Request) -> Response:
        filters = validated(RebalanceJobQuery, query_dict(request)).filters()
        return paginated_response(
            request,
            self,
            rebalance_selectors.rebalance_job_list(filters=filters),
            RebalanceJobOutput,
            prepare=rebalance_selectors.job_views,
        )

    @extend_schema(responses=RebalanceJobDetailOutput)
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(RebalanceJobDetailOutput(rebalance_selectors.rebalance_job_get(job_id=int(pk))).data)

    @extend_schema(request=RebalanceJobInput, responses={202: RebalanceJobDetailOutput, 200: RebalanceJobDetailOutput})
    def create(self, request: Request) -> Response:
        data = parse_input(RebalanceJobInput, request.data)
        return _triggered(
            rebalance_jobs.rebalance_trigger(
                actor=actor_from_request(request),
                scope=data["scope"],
                value=data["value"],
                dry_run=data["dry_run"],
                timeout_s=data.get("timeout_s"),
            )
        )


def _spec(data: dict, strategy: str = "AVG", params: dict | None = None):
    return selectors.allocation_input(
        strategy=strategy,
        params=params or {},
        topic=data.get("topic"),
        queues=data.get("queues"),
        group=data.get("group"),
        cids=data.get("cids"),
        current=data.get("current"),
        scenario=data.get("scenario"),
    )


@extend_schema(tags=["allocation"])
class AllocationViewSet(viewsets.ViewSet):
    """Previews change nothing: viewers may post them."""

    action_roles = {"preview": Role.VIEWER, "compare": Role.VIEWER}

    @extend_schema(request=AllocationPreviewInput, responses=AllocationOutput)
    @action(detail=False, methods=["post"])
    def preview(self, request: Request) -> Response:
        data = parse_input(AllocationPreviewInput, request.data)
        result = selectors.allocation_preview(spec=_spec(data, data["strategy"], data.get("params")))
        return Response(AllocationOutput(result).data)

    @extend_schema(request=AllocationCompareInput, responses=CompareOutput)
    @action(detail=False, methods=["post"])
    def compare(self, request: Request) -> Response:
        data = parse_input(AllocationCompareInput, request.data)
        return Response(
            CompareOutput(selectors.allocation_compare(spec=_spec(data), params_by_strategy=data.get("params"))).data
        )
