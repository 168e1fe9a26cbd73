"""Template context: the user's role, for navigation and for hiding buttons a role may not use.

Hiding is a courtesy; the views and services check the role themselves.
"""

from __future__ import annotations

from django.http import HttpRequest

from console.roles import Role, role_of


def gantry_role(request: HttpRequest) -> dict:
    role = role_of(getattr(request, "user", None))
    return {
        "gantry_role": role.value if role else "",
        "can_operate": bool(role and role.allows(Role.OPERATOR)),
        "can_admin": bool(role and role.allows(Role.ADMIN)),
    }
