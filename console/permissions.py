"""Role checks at the two front doors: DRF's RolePermission and the console's ``console_page``.

The rule is the same at both: reading needs ``read_role`` (viewer unless said otherwise),
anything else needs ``write_role`` (operator unless said otherwise); a viewset may name the
role of single actions in ``action_roles``. Without credentials the API answers 401 and pages
redirect to the login page; with a role too low both answer 403. Services check again
(``actor.require``), so a task or a new front door cannot skip the rule. Each 403 of the two
front doors is written to the audit log (``access.denied``: who, method and path, the role needed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from rest_framework.permissions import SAFE_METHODS, BasePermission

from console.audit import record_refusal
from console.roles import Role, role_of


def required_role(method: str, *, read: Role, write: Role) -> Role:
    return read if method in SAFE_METHODS else write


class RolePermission(BasePermission):
    """Allow a request when the user's role reaches what the view asks for this method/action."""

    def has_permission(self, request, view) -> bool:
        role = role_of(request.user)
        if role is None:
            return False
        action_roles: dict[str, Role] = getattr(view, "action_roles", {})
        action = getattr(view, "action", None)
        if action in action_roles:
            needed = action_roles[action]
        else:
            needed = required_role(
                request.method,
                read=getattr(view, "read_role", None) or Role.VIEWER,
                write=getattr(view, "write_role", None) or Role.OPERATOR,
            )
        if not role.allows(needed):
            self.message = f"this needs the {Role(needed).value} role; you are a {role.value}"
            record_refusal(request, needed=Role(needed).value, reason=self.message)
            return False
        return True


def console_page(
    *, methods: Iterable[str] = ("GET",), read: Role = Role.VIEWER, write: Role = Role.OPERATOR
) -> Callable:
    """Guard a console view: login first, then the role for the method, then the method itself."""
    allowed = {m.upper() for m in methods}
    if "GET" in allowed:
        allowed.add("HEAD")

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            role = role_of(request.user)
            needed = required_role(request.method, read=read, write=write)
            if role is None or not role.allows(needed):
                message = f"This page needs the {Role(needed).value} role."
                record_refusal(request, needed=Role(needed).value, reason=message)
                raise PermissionDenied(message)
            if request.method not in allowed:
                return HttpResponseNotAllowed(sorted(allowed))
            return view(request, *args, **kwargs)

        guarded.gantry_roles = {"read": read, "write": write, "methods": frozenset(allowed)}  # type: ignore[attr-defined]
        return guarded

    return decorate
