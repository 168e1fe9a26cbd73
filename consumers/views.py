"""Consumer pages: the group list (htmx filter), a group's detail, reset offsets by time (plan,
then apply), the allocation page (grid, every strategy, what-if, live check; htmx), and
rebalance jobs (trigger from the group page, a job's progress polled by htmx, the history).

Each view parses, calls one selector or service, and renders; a page and its htmx swap share
the ``_partial.html`` template.
"""

from __future__ import annotations

from typing import Any

from dataclasses import replace

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from console.actor import actor_from_request
from console.errors import InvalidInput, NotFound, ServiceError, show_on_form
from console.permissions import console_page
from console.rest import order_by
from consumers import selectors, services
from consumers.advisor import group_advice
from consumers.forms import AllocationForm, GroupFilterForm, RebalanceFilterForm, RebalanceForm, ResetOffsetForm
from consumers.grid import build_grid
from consumers.pop_state import group_pop_state_read
from consumers.rebalance import jobs as rebalance_jobs
from consumers.rebalance import selectors as rebalance_selectors
from consumers.rebalance.types import JobPage

PAGE_SIZE = 100


def _page_or_partial(request: HttpRequest, page: str, partial: str, context: dict, status: int = 200) -> HttpResponse:
    return render(request, partial if request.htmx else page, context, status=status)


@console_page()
def group_list(request: HttpRequest) -> HttpResponse:
    form = GroupFilterForm(request.GET or None)
    groups = selectors.group_list(**({} if form.refused else form.filters()))
    if form.refused:  # a refused filter lists nothing (console.query_filters)
        groups = replace(groups, rows=())
    ordering = "" if form.refused else form.cleaned_data.get("ordering", "") if form.is_bound else ""
    rows = order_by(
        groups.rows, ordering or None, selectors.GROUP_ORDERING, "name"
    )  # before paging: the whole list is sorted
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    unordered = query.copy()
    unordered.pop("ordering", None)
    context = {
        "form": form,
        "groups": groups,
        "page": page,
        "rows": selectors.with_members(page.object_list, groups.asked),
        "query": query.urlencode(),
        "ordering": ordering,
        "unordered_query": unordered.urlencode(),
    }
    return _page_or_partial(request, "consumers/group_list.html", "consumers/_group_table.html", context, form.status)


@console_page()
def group_detail(request: HttpRequest, name: str) -> HttpResponse:
    detail = selectors.group_detail(name=name)
    context = {"detail": detail, "advice": group_advice(detail), "pop": group_pop_state_read(name=name, known=True)}
    if not request.htmx:  # the 5 s refresh swaps the detail only; the rebalance panel polls on its own
        context.update(rebalance_form=RebalanceForm(), rebalance_job=rebalance_selectors.latest_group_job(group=name))
    return _page_or_partial(request, "consumers/group_detail.html", "consumers/_group_detail.html", context)


@console_page()
def client_running_info(request: HttpRequest, name: str, client_id: str) -> HttpResponse:
    """One member's running info: the page, or (htmx) the fragment the group page opens under the member.
    A client that is gone or cannot answer is a sentence on the page (the API answers 404/503), not an error page."""
    context: dict[str, Any] = {"name": name, "client_id": client_id}
    try:
        context["info"] = selectors.client_running_info(name=name, client_id=client_id)
    except ServiceError as exc:  # NotFound (not an online member), Unavailable (too old, no answer): the reason
        context.update(reason=exc.message, not_member=isinstance(exc, NotFound))
    return _page_or_partial(
        request, "consumers/client_running_info.html", "consumers/_client_running_info.html", context
    )


@console_page(methods=("POST",))
def group_rebalance(request: HttpRequest, name: str) -> HttpResponse:
    """POST: trigger a rebalance of the group (dry run unless dry_run=0); show the job (htmx) or go to its page."""
    form = RebalanceForm(request.POST)
    if form.is_valid():
        try:
            triggered = rebalance_jobs.rebalance_trigger(
                actor=actor_from_request(request),
                scope="group",
                value=name,
                dry_run=form.cleaned_data["dry_run"],
                timeout_s=form.cleaned_data["timeout_s"],
            )
        except ServiceError as exc:
            show_on_form(form, exc)
            status = exc.status
        else:
            if not triggered.created:
                messages.info(
                    request, f"Job {triggered.job.id} was already {triggered.job.status} for {name}: showing it."
                )
            if request.htmx:  # into the panel's job slot: the job card, which polls itself while active
                job = rebalance_selectors.rebalance_job_get(job_id=triggered.job.id)
                return render(
                    request,
                    "consumers/_rebalance_result.html",
                    {"form": RebalanceForm(), "job": job, "already": not triggered.created},
                )
            return redirect("consumers:rebalance-job", pk=triggered.job.id)
    else:
        status = 400
    if request.htmx:
        return render(request, "consumers/_rebalance_result.html", {"form": form}, status=status)
    for error in form.non_field_errors():
        messages.error(request, error)
    for field in form:
        for error in field.errors:
            messages.error(request, f"{field.label}: {error}")
    return redirect("consumers:detail", name=name)


@console_page()
def rebalance_job(request: HttpRequest, pk: int) -> HttpResponse:
    """One job: its progress (the fragment polls itself every second while the job is active), then its outcome."""
    job = rebalance_selectors.rebalance_job_get(job_id=pk)
    return _page_or_partial(request, "consumers/rebalance_job.html", "consumers/_rebalance_job.html", {"job": job})


@console_page()
def rebalance_jobs_page(request: HttpRequest) -> HttpResponse:
    """The history of rebalance jobs, filtered; with a group, the queues its jobs moved (flapping shows)."""
    form = RebalanceFilterForm(request.GET or None)
    filters = RebalanceFilterForm().filters() if form.refused else form.filters()
    if form.refused:  # a refused filter lists nothing (console.query_filters)
        history = JobPage((), (), Paginator((), 1).get_page(1))
    else:
        history = rebalance_selectors.rebalance_history(filters=filters, page_number=request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "history": history,
        "group": filters.group,
        "query": query.urlencode(),
        "page": history.page,
        "polled_query": request.GET.urlencode(),
        "polling": any(j.active for j in history.jobs),
    }
    return _page_or_partial(
        request, "consumers/rebalance_jobs.html", "consumers/_rebalance_table.html", context, form.status
    )


@console_page(methods=("GET", "POST"))
def group_reset_offset(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the form and, once filled in, the plan (nothing changes); POST: apply it (operator)."""
    topics = selectors.group_topics(name=name)
    data = request.POST if request.method == "POST" else (request.GET if "topic" in request.GET else None)
    form = ResetOffsetForm(data, topics=topics, brokers=selectors.master_broker_names() if topics else ())
    plan, status = None, 200
    if form.is_bound and form.is_valid():
        try:
            if request.method == "POST":
                done = services.group_reset_offset(actor=actor_from_request(request), group=name, **_reset_args(form))
                messages.success(
                    request, f"Offsets of {name} on {done.topic} reset to {done.target.label()} ({done.mode})."
                )
                return redirect("consumers:detail", name=name)
            plan = selectors.group_offset_reset_plan(name=name, **_reset_args(form))
        except ServiceError as exc:
            show_on_form(form, exc)
    if form.is_bound and form.errors:
        status = 400
    context = {"name": name, "topics": topics, "form": form, "plan": plan}
    return _page_or_partial(request, "consumers/reset_offset.html", "consumers/_reset_plan.html", context, status)


def _reset_args(form: ResetOffsetForm) -> dict:
    return {"topic": form.cleaned_data["topic"], "target": form.cleaned_data["target"]}


@console_page()
def allocation(request: HttpRequest) -> HttpResponse:
    form = AllocationForm(request.GET or {})
    context: dict = {"form": form}
    inputs = form.inputs()
    if inputs is not None:
        try:
            context.update(_allocation_context(form, inputs))
        except InvalidInput as exc:
            form.refuse(exc)
    status = 400 if form.errors else 200
    return _page_or_partial(request, "consumers/allocation.html", "consumers/_allocation.html", context, status)


def _allocation_context(form: AllocationForm, inputs: dict) -> dict:
    try:
        spec = selectors.allocation_input(**inputs)
    except NotFound as exc:  # an unknown topic or group: the operator's input stays, the reason under its field
        field = "topic" if inputs.get("topic") and exc.message.startswith("topic") else "group"
        raise InvalidInput(field, exc.message) from None
    context: dict = {"spec": spec}
    if form.value("view") == "compare":
        comparison = selectors.allocation_compare(spec=spec)
        context["comparison"] = [
            (
                e,
                build_grid(e.result.preview, e.result.diff, added=e.result.added_cids, removed=e.result.removed_cids)
                if e.result
                else None,
            )
            for e in comparison.entries
        ]
    else:
        result = selectors.allocation_preview(spec=spec)
        context["result"] = result
        context["grid"] = build_grid(result.preview, result.diff, added=result.added_cids, removed=result.removed_cids)
    if spec.topic and spec.group:
        context["checks"] = [
            (c, build_grid(c.check.observed) if c.check else None)
            for c in selectors.group_live_checks(name=spec.group, topic=spec.topic)
        ]
    return context
