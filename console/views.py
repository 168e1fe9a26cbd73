"""Console pages owned by the project itself: the overview (home) and health."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from brokers.selectors import broker_overview


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Overview: the live brokers, read through the admin client. htmx polls the table."""
    context = {"overview": broker_overview()}
    if request.htmx:
        return render(request, "console/_broker_table.html", context)
    return render(request, "console/home.html", context)


@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Liveness of the web process itself; open to load balancers without login."""
    return JsonResponse({"status": "ok"})
