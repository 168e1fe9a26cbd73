"""The cluster overview page (htmx polls it), a broker group's page with its promotion panel, and
promotion jobs' pages (a job's card polls itself while the job is active)."""

from __future__ import annotations

import time

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from brokers.forms import PromoteForm
from brokers.gateway.broker_config import group_configs
from brokers.gateway.producers import all_producer_groups
from brokers.gateway.overview import broker_group as read_broker_group
from brokers.gateway.overview import broker_overview
from brokers.gateway.runtime_status import member_runtimes
from brokers.promotion import jobs as promotion_jobs
from brokers.promotion import selectors as promotion_selectors
from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role


@console_page()
def home(request: HttpRequest) -> HttpResponse:
    """Overview: name servers, broker groups, brokers and alerts, read through the admin client. htmx polls it."""
    context = {"overview": broker_overview()}
    if request.htmx:
        return render(request, "brokers/_overview.html", context)
    return render(request, "brokers/home.html", context)


@console_page()
def broker_group(request: HttpRequest, name: str) -> HttpResponse:
    """One broker group: its members, roles, epochs, HA links and lag (htmx refresh), and the promotion panel."""
    group = read_broker_group(name)
    context = {"group": group, "name": name}
    if request.htmx:  # the 5 s refresh swaps the members only; the promotion panel polls on its own
        return render(request, "brokers/_broker_group.html", context)
    context.update(
        promote_form=PromoteForm.for_group(group),
        promotion_job=promotion_selectors.latest_group_job(broker_name=name),
        configs=group_configs(group.members),
        runtimes=member_runtimes(((m.broker_id, m.addr) for m in group.members), int(time.time() * 1000)),
    )
    return render(request, "brokers/broker_group.html", context)


@console_page(methods=("POST",), write=Role.ADMIN)
def broker_promote(request: HttpRequest, name: str) -> HttpResponse:
    """POST: promote a slave of the group (dry run unless dry_run=0); show the job (htmx) or go to its page."""
    form = PromoteForm(request.POST, slaves=_posted_slave(request))
    status = 400
    if form.is_valid():
        try:
            triggered = promotion_jobs.promotion_trigger(
                actor=actor_from_request(request),
                broker_name=name,
                broker_id=form.cleaned_data["broker_id"],
                force=form.cleaned_data["force"],
                dry_run=form.cleaned_data["dry_run"],
                role=form.cleaned_data["role"] or None,
            )
        except ServiceError as exc:
            show_on_form(form, exc)
            status = exc.status
        else:
            if request.htmx:  # into the panel's job slot: the job card, which polls itself while active
                return render(
                    request,
                    "brokers/_promotion_result.html",
                    {"form": form, "job": triggered.job, "already": not triggered.created},
                )
            if not triggered.created:
                messages.info(
                    request, f"Job {triggered.job.id} was already {triggered.job.status} for {name}: showing it."
                )
            return redirect("promotion-job", pk=triggered.job.id)
    if request.htmx:
        return render(request, "brokers/_promotion_result.html", {"form": form}, status=status)
    for error in form.non_field_errors():
        messages.error(request, error)
    for field in form:
        for error in field.errors:
            messages.error(request, f"{field.label}: {error}")
    return redirect("broker-group", name=name)


def _posted_slave(request: HttpRequest) -> tuple[tuple[int, str], ...]:
    """The posted id as the form's one choice: the service checks it against the cluster (and says why not)."""
    value = request.POST.get("broker_id", "")
    return ((int(value), ""),) if value.isdigit() else ()


@console_page()
def promotion_job(request: HttpRequest, pk: int) -> HttpResponse:
    """One promotion job: its progress (the card polls itself every second while active), then its outcome."""
    job = promotion_selectors.promotion_job_get(job_id=pk)
    return render(
        request, "brokers/_promotion_job.html" if request.htmx else "brokers/promotion_job.html", {"job": job}
    )


@console_page()
def producers(request: HttpRequest) -> HttpResponse:
    """Producer groups and their connected clients (the masters' heartbeat tables)."""
    return render(request, "brokers/producers.html", {"producers": all_producer_groups()})
