"""Roles: what a console user may do, ranked viewer < operator < admin.

- viewer: read everything except users and API tokens;
- operator: also change the cluster (topics, groups, offsets, rebalance);
- admin: also manage users and API tokens.

A user's role is its :class:`~console.models.AccountRole` row; a user without one is an admin
when it is a superuser (``createsuperuser``), else a viewer. Inactive users have no role.
"""

from __future__ import annotations

from typing import cast

from django.core.exceptions import ObjectDoesNotExist
from django.db import models


class Role(models.TextChoices):
    # cast: Django's choices make each (value, label) pair a member; without django-stubs mypy sees the pair
    VIEWER = cast("Role", ("viewer", "viewer: read"))
    OPERATOR = cast("Role", ("operator", "operator: topics, groups, offsets, rebalance"))
    ADMIN = cast("Role", ("admin", "admin: users and API tokens"))

    @property
    def rank(self) -> int:
        return _RANK[self.value]

    def allows(self, required: Role) -> bool:
        """True when this role may do what ``required`` may."""
        return self.rank >= Role(required).rank


_RANK = {"viewer": 0, "operator": 1, "admin": 2}


def assigned_role(user) -> Role:
    """The role given to ``user`` (active or not)."""
    try:
        return Role(user.gantry_role.role)
    except ObjectDoesNotExist:
        return Role.ADMIN if user.is_superuser else Role.VIEWER


def role_of(user) -> Role | None:
    """The role of an authenticated, active user; None for anyone else."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return None
    return assigned_role(user)
