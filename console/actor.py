"""Actor: who asks a service for something (user, role, front door, address).

Services take ``actor=`` as a keyword, check its role with :meth:`Actor.require` and name it in
the audit log. Views build it with :func:`actor_from_request`; Celery tasks use :data:`SYSTEM`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.conf import settings
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
    """The client's address: REMOTE_ADDR, or behind GANTRY_TRUSTED_PROXY_COUNT proxies the address
    the outermost of them saw (X-Forwarded-For, counted from the right).

    Each proxy appends the address it received the request from, so with N trusted proxies the
    N-th entry from the right is the one the first proxy wrote: entries left of it are the
    client's own claims and are never believed. A request with fewer entries did not come
    through every proxy; its REMOTE_ADDR is taken. Lockout (console.lockout) and audit log alike
    key on this address.
    """
    remote = request.META.get("REMOTE_ADDR") or "0.0.0.0"
    proxies = int(getattr(settings, "GANTRY_TRUSTED_PROXY_COUNT", 0) or 0)
    if proxies <= 0:
        return remote
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    if len(hops) < proxies:
        return remote
    claimed = hops[-proxies]
    try:
        return str(ipaddress.ip_address(claimed))
    except ValueError:  # a proxy that writes something else than an address: do not key on it
        return remote


def actor_from_request(request: HttpRequest) -> Actor:
    """The actor of an authenticated request (console session or API token)."""
    user = request.user
    role = role_of(user)
    if role is None:
        raise Forbidden("not logged in")
    source = "api" if request.path.startswith("/api/") else "console"
    return Actor(username=user.get_username(), role=role, source=source, ip=client_ip(request))
