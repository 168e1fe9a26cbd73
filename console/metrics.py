"""The console's own health at ``/metrics`` (Prometheus text format, prometheus-client).

- ``gantry_console_requests`` (counter; labels ``view``, ``method``, ``status``) and
  ``gantry_console_request_latency_seconds`` (histogram; label ``view``), counted by
  :class:`RequestMetricsMiddleware`. ``view`` is the URL pattern's name (``unmatched`` for a
  404 that matched none), so a client cannot grow the label set with made-up paths.
- ``gantry_console_celery_broker_up``: 1 when the Celery broker (Redis) answers a PING, at
  scrape time.

Every figure is this web process's own (each gunicorn worker counts its own requests). The page
needs an API token (``Authorization: Token ...``) or a signed-in session, like ``/api/v1``;
anonymous scrapes get 401/403.
"""

from __future__ import annotations

import time
from typing import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import SAFE_METHODS, BasePermission

from console import queueing

REGISTRY = CollectorRegistry(auto_describe=False)
REQUESTS = Counter(
    "gantry_console_requests", "Requests the console answered", ["view", "method", "status"], registry=REGISTRY
)
LATENCY = Histogram(
    "gantry_console_request_latency_seconds", "Time the console took per request", ["view"], registry=REGISTRY
)


class _CeleryBrokerCollector:
    def collect(self):
        try:
            queueing.check_redis()
            up = 1
        except queueing.QueueUnavailable:
            up = 0
        yield GaugeMetricFamily(
            "gantry_console_celery_broker_up", "1 when the Celery broker (Redis) answers PING", value=up
        )


REGISTRY.register(_CeleryBrokerCollector())


class RequestMetricsMiddleware:
    """Count each request and its time under its URL pattern's name."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name if match is not None else "") or "unmatched"
        LATENCY.labels(view).observe(time.perf_counter() - started)
        REQUESTS.labels(
            view,
            request.method
            if request.method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
            else "other",
            str(response.status_code),
        ).inc()
        return response


class ReadMetrics(BasePermission):
    """Any signed-in user or token may read; nothing else (403, as every read-only console URL)."""

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.method in SAFE_METHODS)


@extend_schema(exclude=True)  # Prometheus text, not part of the JSON API
@api_view(["GET"])
@permission_classes([ReadMetrics])
def metrics(request) -> HttpResponse:
    """The registry above in the Prometheus text format (token or session required)."""
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
