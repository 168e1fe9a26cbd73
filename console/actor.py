"""Actor: who asks a service for something (user, role, front door, address).

Services take ``actor=`` as a keyword, check its role with :meth:`Actor.require` and name it in
the audit log. Views build it with :func:`actor_from_request`; Celery tasks use :data:`SYSTEM`.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from console.errors import Forbidden
from console.roles import Role, role_of


@dataclass(frozen=True)
class Actor:
    username: str
    role: Role
    source: str = "console"  # console, api, system
    ip: str | None = None

    def require(self, role: Role) -> None:
        """Raise Forbidden unless this actor's role may do what ``role`` may."""
        if not self.role.allows(role):
            raise Forbidden(f"this needs the {Role(role).value} role; {self.username} is a {self.role.value}")


SYSTEM = Actor(username="system", role=Role.ADMIN, source="system")


def client_ip(request: HttpRequest) -> str:
    """The client's address as the web server saw it (REMOTE_ADDR; a proxy in front is the client)."""
    return request.META.get("REMOTE_ADDR") or "0.0.0.0"


def actor_from_request(request: HttpRequest) -> Actor:
    """The actor of an authenticated request (console session or API token)."""
    user = request.user
    role = role_of(user)
    if role is None:
        raise Forbidden("not logged in")
    source = "api" if request.path.startswith("/api/") else "console"
    return Actor(username=user.get_username(), role=role, source=source, ip=client_ip(request))
