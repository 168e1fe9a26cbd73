"""Console pages owned by the project itself: health, login, audit log, users, API tokens (the
cluster overview at / is the brokers app's, brokers/views.py).

Each view parses, calls one selector or service, and renders; roles are checked by
``console_page`` (and again by the services).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from console import passwords, selectors, services
from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.forms import (
    AuditFilterForm,
    LoginForm,
    PasswordChangeForm,
    PasswordResetForm,
    TokenCreateForm,
    UserChangeForm,
    UserCreateForm,
    role_choices,
)
from console.permissions import console_page
from console.preference_views import account_context
from console.roles import Role

PAGE_SIZE = 50


@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Liveness of the web process itself; open to load balancers without login."""
    return JsonResponse({"status": "ok"})


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for whatever a page links: the static icon (no login)."""
    return redirect(static("favicon.svg"))


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for a load balancer or orchestrator: the process answers. Touches nothing else (a
    database outage must not get healthy web processes restarted); no login, nothing revealed."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when every dependency a request needs answers, else 503 naming the ones that did
    not (``{"status": "unavailable", "failed": ["database"]}``). No login; no addresses, no error text."""
    failed = [name for name, ready in selectors.dependencies_ready().items() if not ready]
    if failed:
        return JsonResponse({"status": "unavailable", "failed": failed}, status=503)
    return JsonResponse({"status": "ok", "failed": []})


class LoginView(auth_views.LoginView):
    """Django's login page with the failed-login lockout (429 while locked)."""

    template_name = "console/login.html"
    form_class = LoginForm

    def form_invalid(self, form: LoginForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.locked is not None:
            response.status_code = 429
            response["Retry-After"] = str(form.locked.retry_after_s)
        return response


@console_page()
def audit_log(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET or None)
    entries = () if form.refused else selectors.audit_list(**form.filters())
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    template = "console/_audit_table.html" if request.htmx else "console/audit_log.html"
    return render(request, template, context, status=form.status)


@console_page(methods=("GET", "POST"), read=Role.ADMIN, write=Role.ADMIN)
def users(request: HttpRequest) -> HttpResponse:
    form = UserCreateForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created = services.user_create(
                actor=actor_from_request(request),
                username=form.cleaned_data["username"],
                role=Role(form.cleaned_data["role"]),
                password=form.cleaned_data["password"] or None,
            )
            form = UserCreateForm()
        except ServiceError as exc:
            show_on_form(form, exc)
    return render(
        request,
        "console/users.html",
        {"users": selectors.user_list(), "form": form, "created": created, "roles": role_choices()},
        status=_status(request, form),
    )


@console_page(methods=("POST",), read=Role.ADMIN, write=Role.ADMIN)
def user_change(request: HttpRequest, username: str) -> HttpResponse:
    form = UserChangeForm(request.POST)
    if form.is_valid() and form.needs_confirmation():
        user = next((u for u in selectors.user_list() if u.username == username), None)
        if user is None:
            messages.error(request, f"unknown user {username}.")
            return redirect("users")
        return render(request, "console/user_deactivate.html", {"target": user})
    if form.is_valid() and form.changes():
        try:
            services.user_update(actor=actor_from_request(request), username=username, **form.changes())
            messages.success(request, f"User {username} updated.")
        except ServiceError as exc:
            messages.error(request, exc.message)
    return redirect("users")


@console_page(methods=("POST",), read=Role.ADMIN, write=Role.ADMIN)
def user_password(request: HttpRequest, username: str) -> HttpResponse:
    """An admin sets ``username``'s password (its console sessions end; its API tokens stay)."""
    form = PasswordResetForm(request.POST)
    if not form.is_valid():
        for name, errors in form.errors.items():
            messages.error(
                request,
                f"Password of {username} not set: {form.fields[name].label if name in form.fields else name}: {errors[0]}",
            )
        return redirect("users")
    try:
        passwords.password_reset(actor=actor_from_request(request), username=username, **form.cleaned_data)
    except ServiceError as exc:
        messages.error(request, f"Password of {username} not set: {_field_reason(exc, form)}")
        return redirect("users")
    if username == request.user.get_username():  # an admin setting its own: this session stays signed in
        request.user.refresh_from_db()
        update_session_auth_hash(request, request.user)
    messages.success(
        request, f"Password of {username} set; its console sessions are signed out (API tokens keep working)."
    )
    return redirect("users")


@console_page(methods=("GET", "POST"), read=Role.VIEWER, write=Role.VIEWER)
def password_change(request: HttpRequest) -> HttpResponse:
    """Any signed-in user changes its own password; its other sessions end, this one stays."""
    form = PasswordChangeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            passwords.password_change(actor=actor_from_request(request), **form.cleaned_data)
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            request.user.refresh_from_db()
            update_session_auth_hash(request, request.user)
            messages.success(request, "Your password is changed; your other console sessions are signed out.")
            return redirect("password-change")
    return render(
        request, "console/password_change.html", account_context(request, form=form), status=_status(request, form)
    )


def _field_reason(exc: ServiceError, form) -> str:
    """A refusal as one line naming the form's field ("New password: ...")."""
    fields = getattr(exc, "fields", None)
    if not fields:
        return exc.message
    name, reasons = next(iter(fields.items()))
    return f"{form.fields[name].label if name in form.fields else name}: {reasons[0]}"


@console_page(methods=("GET", "POST"), read=Role.ADMIN, write=Role.ADMIN)
def tokens(request: HttpRequest) -> HttpResponse:
    usernames = [u.username for u in selectors.user_list() if u.is_active]
    form = TokenCreateForm(request.POST or None, usernames=usernames)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created = services.api_token_create(actor=actor_from_request(request), **form.cleaned_data)
            form = TokenCreateForm(usernames=usernames)
        except ServiceError as exc:
            show_on_form(form, exc)
    page = Paginator(selectors.token_list(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request, "console/tokens.html", {"page": page, "form": form, "created": created}, status=_status(request, form)
    )


@console_page(methods=("POST",), read=Role.ADMIN, write=Role.ADMIN)
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        info = services.api_token_revoke(actor=actor_from_request(request), token_id=token_id)
        messages.success(request, f"Token {info.prefix}… of {info.username} revoked.")
    except ServiceError as exc:
        messages.error(request, exc.message)
    return redirect("tokens")


def _status(request: HttpRequest, form) -> int:
    return 400 if request.method == "POST" and form.errors else 200


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404: JSON under /api/ (like every API error), the console's page elsewhere."""
    from console.http_errors import Problem

    if request.path.startswith("/api/"):
        return JsonResponse(Problem(404, "not_found", f"no such API endpoint: {request.path}").as_json(), status=404)
    return render(
        request,
        "console/error.html",
        {"problem": Problem(404, "not_found", gettext("This page does not exist."))},
        status=404,
    )
