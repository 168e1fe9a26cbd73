"""Subscription group pages: the list (each master's settings, htmx filter), create, edit, delete (with a confirmation page).

Each view parses, calls one selector or service, and renders; writes are plain form posts that redirect.
"""

from __future__ import annotations

from dataclasses import replace

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from brokers.gateway.cluster import cluster_info
from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role
from consumers.subscription_groups import selectors
from consumers.subscription_groups import services
from consumers.forms import GroupFilterForm
from consumers.subscription_groups.forms import SubscriptionGroupDeleteForm, SubscriptionGroupForm


def _choices() -> dict:
    masters = selectors.masters_of(cluster_info())
    return {"clusters": tuple(sorted({m.cluster for m in masters.values()})), "brokers": tuple(masters)}


@console_page()
def subscription_group_list(request: HttpRequest) -> HttpResponse:
    form = GroupFilterForm(request.GET or None)
    groups = selectors.subscription_group_list(**({} if form.refused else form.filters()))
    if form.refused:  # a refused filter lists nothing (console.query_filters)
        groups = replace(groups, rows=())
    context = {"form": form, "groups": groups, "settings": selectors.SETTINGS}
    template = "consumers/_subscription_group_table.html" if request.htmx else "consumers/subscription_group_list.html"
    return render(request, template, context, status=form.status)


def _save_form(request: HttpRequest, group, save, done) -> HttpResponse:
    """The create and edit pages: the form (from ``group``'s settings when editing); on a valid POST ``save`` runs
    (a service taking actor and spec), then the list with ``done(saved)`` and where; a refusal is shown on the form (400)."""
    form = SubscriptionGroupForm(request.POST or None, group=group, **_choices())
    if request.method == "POST" and form.is_valid():
        try:
            saved = save(actor=actor_from_request(request), spec=form.spec())
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            messages.success(request, f"{done(saved)} on {', '.join(saved.broker_names)}.")
            return redirect("consumers:subscription-groups")
    status = 400 if request.method == "POST" else 200
    return render(request, "consumers/subscription_group_form.html", {"form": form, "group": group}, status=status)


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def subscription_group_create(request: HttpRequest) -> HttpResponse:
    return _save_form(
        request, None, services.subscription_group_create, lambda saved: f"Subscription group {saved.name} created"
    )


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def subscription_group_update(request: HttpRequest, name: str) -> HttpResponse:
    group = selectors.subscription_group_get(name=name)
    return _save_form(
        request, group, services.subscription_group_update, lambda saved: f"Subscription group {name} saved"
    )


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def subscription_group_delete(request: HttpRequest, name: str) -> HttpResponse:
    """GET: what deleting means and where from (the confirmation); POST: delete."""
    group = selectors.subscription_group_get(name=name)
    form = SubscriptionGroupDeleteForm(request.POST or None, group=group)
    if request.method == "POST" and form.is_valid():
        try:
            deletion = services.subscription_group_delete(actor=actor_from_request(request), name=name, **form.target())
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            offsets = " with its committed offsets" if deletion.remove_offsets else ""
            messages.success(request, f"Subscription group {name} deleted from {', '.join(deletion.brokers)}{offsets}.")
            return redirect("consumers:subscription-groups")
    status = 400 if request.method == "POST" else 200
    return render(request, "consumers/subscription_group_delete.html", {"form": form, "group": group}, status=status)
