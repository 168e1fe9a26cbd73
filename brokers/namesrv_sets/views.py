"""The Clusters page (/namesrv-sets/): the tiers the console can switch to; admins add, edit and remove them."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from brokers.namesrv_sets import services
from brokers.namesrv_sets.forms import NamesrvSetForm
from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role


def _page(
    request: HttpRequest, *, form: NamesrvSetForm | None = None, edit: str = "", status: int = 200
) -> HttpResponse:
    sets = services.namesrv_set_list()
    editing = next((s for s in sets if s.name == edit and not s.default), None)
    if form is None:
        form = NamesrvSetForm.for_set(editing) if editing else NamesrvSetForm()
    return render(
        request,
        "brokers/namesrv_sets.html",
        {"sets": sets, "form": form, "editing": editing.name if editing else edit},
        status=status,
    )


@console_page(read=Role.ADMIN)
def namesrv_sets_page(request: HttpRequest) -> HttpResponse:
    """Every set (no secrets); ``?edit=NAME`` fills the form with one."""
    return _page(request, edit=request.GET.get("edit", ""))


@console_page(methods=("POST",), read=Role.ADMIN, write=Role.ADMIN)
def namesrv_set_post(request: HttpRequest) -> HttpResponse:
    """Add (``mode=create``) or edit a set."""
    form = NamesrvSetForm(request.POST)
    create = request.POST.get("mode") != "update"
    edit = "" if create else request.POST.get("name", "")
    if form.is_valid():
        actor = actor_from_request(request)
        try:
            if create:
                services.namesrv_set_create(actor=actor, data=form.set_input())
            else:
                services.namesrv_set_update(actor=actor, name=form.cleaned_data["name"], data=form.set_input())
        except ServiceError as exc:
            show_on_form(form, exc)
            return _page(request, form=form, edit=edit, status=exc.status)
        messages.success(request, f"Name-server set {form.cleaned_data['name']} {'added' if create else 'saved'}.")
        return redirect("namesrv-sets")
    return _page(request, form=form, edit=edit, status=400)


@console_page(methods=("POST",), read=Role.ADMIN, write=Role.ADMIN)
def namesrv_set_delete(request: HttpRequest, name: str) -> HttpResponse:
    try:
        services.namesrv_set_delete(actor=actor_from_request(request), name=name)
    except ServiceError as exc:
        messages.error(request, f"Name-server set {name} was not removed: {exc.message}")
    else:
        messages.success(request, f"Name-server set {name} removed.")
    return redirect("namesrv-sets")
