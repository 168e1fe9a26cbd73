"""Template context: the name-server sets for the header's switcher and the one this request runs against."""

from __future__ import annotations

from django.http import HttpRequest

from brokers.gateway.namesrv_sets import DEFAULT
from brokers.models import NamesrvSet


def namesrv_switcher(request: HttpRequest) -> dict:
    """``namesrv_sets`` (names, ``default`` first; empty for anonymous pages) and ``namesrv_set`` (the current name)."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {"namesrv_sets": (), "namesrv_set": DEFAULT}
    names = (DEFAULT, *NamesrvSet.objects.values_list("name", flat=True))
    return {"namesrv_sets": [{"name": n} for n in names], "namesrv_set": getattr(request, "namesrv_set", DEFAULT)}
