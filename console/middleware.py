"""Request-wide guards: oversize bodies (413), the Content-Security-Policy header, and engine
errors on console pages.

The API's errors go through DRF's exception handler (console.http_errors); pages raise the same
errors and :class:`EngineErrorMiddleware` renders them with the same status and message, so a
page never shows a 500 for a name server that is down.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from console.http_errors import Problem, problem_for


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


class BodySizeLimitMiddleware:
    """Refuse a body larger than settings.MAX_BODY_BYTES with 413 before anything reads it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.MAX_BODY_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            detail = f"the request body is {length} bytes; the limit is {limit} bytes"
            if _is_api(request):
                return JsonResponse(Problem(413, "too_large", detail).as_json(), status=413)
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Send settings.CONTENT_SECURITY_POLICY on every response (Django 5.2 has no CSP of its own).

    Scripts and styles come from the console's own static files only: no inline script, handler
    attribute or ``javascript:`` URL runs, so an HTML injection cannot become script.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class EngineErrorMiddleware:
    """Render engine and service errors raised by console views as an error page (or fragment)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if _is_api(request):
            return None  # DRF's handler answers API requests
        problem = problem_for(exc)
        if problem is None:
            return None
        template = "console/_error.html" if getattr(request, "htmx", False) else "console/error.html"
        return render(request, template, {"problem": problem}, status=problem.status)
