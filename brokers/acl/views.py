"""The Access control page: the brokers' ACL read-only for every role; admins create, edit and delete
accounts and set the global white addresses (each a POST that redirects back, or an htmx swap)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from brokers.acl import services
from brokers.acl.forms import AclAccountForm, GlobalWhiteForm
from brokers.acl.selectors import acl_overview
from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role, role_of


def _page(
    request: HttpRequest,
    *,
    account_form: AclAccountForm | None = None,
    white_form: GlobalWhiteForm | None = None,
    edit: str = "",
    status: int = 200,
) -> HttpResponse:
    overview = acl_overview()
    editing = overview.account(edit) if edit else None
    if account_form is None:
        account_form = AclAccountForm.for_account(editing) if editing else AclAccountForm()
    if white_form is None:
        white_form = GlobalWhiteForm(initial={"addresses": "\n".join(overview.global_white_remote_addresses)})
    role = role_of(request.user)
    context = {
        "overview": overview,
        "account_form": account_form,
        "white_form": white_form,
        "editing": edit,
        "can_edit_acl": role is not None and role.allows(Role.ADMIN),
    }
    return render(request, "brokers/acl.html", context, status=status)


@console_page()
def acl_page(request: HttpRequest) -> HttpResponse:
    """Accounts (no secrets), global white addresses and each broker's ACL version; ``?edit=KEY`` fills the form."""
    return _page(request, edit=request.GET.get("edit", ""))


@console_page(methods=("POST",), write=Role.ADMIN)
def acl_account_post(request: HttpRequest) -> HttpResponse:
    """Create (``mode=create``) or update an account on every broker."""
    form = AclAccountForm(request.POST)
    create = request.POST.get("mode") != "update"
    if form.is_valid():
        try:
            services.acl_account_save(actor=actor_from_request(request), data=form.account_input(), create=create)
        except ServiceError as exc:
            show_on_form(form, exc)
            return _page(
                request, account_form=form, edit="" if create else form.cleaned_data["access_key"], status=exc.status
            )
        messages.success(
            request, f"Account {form.cleaned_data['access_key']} {'created' if create else 'updated'} on every broker."
        )
        return redirect("acl")
    return _page(request, account_form=form, edit="" if create else request.POST.get("access_key", ""), status=400)


@console_page(methods=("POST",), write=Role.ADMIN)
def acl_account_delete(request: HttpRequest, access_key: str) -> HttpResponse:
    try:
        services.acl_account_delete(actor=actor_from_request(request), access_key=access_key)
    except ServiceError as exc:
        messages.error(request, f"Account {access_key} was not deleted: {exc.message}")
    else:
        messages.success(request, f"Account {access_key} deleted on every broker.")
    return redirect("acl")


@console_page(methods=("POST",), write=Role.ADMIN)
def acl_global_white_post(request: HttpRequest) -> HttpResponse:
    form = GlobalWhiteForm(request.POST)
    if form.is_valid():
        try:
            services.acl_global_white_update(actor=actor_from_request(request), addresses=form.address_list())
        except ServiceError as exc:
            show_on_form(form, exc)
            return _page(request, white_form=form, status=exc.status)
        messages.success(request, "Global white addresses set on every broker.")
        return redirect("acl")
    return _page(request, white_form=form, status=400)
