"""The middleware that picks the name-server set a web request runs against (brokers.gateway.namesrv_sets).

``?namesrv_set=NAME`` on any URL wins; on a console page (not /api/) it also becomes the session's
choice, so the pages, forms and htmx polls that follow stay on it without carrying the parameter.
Without the parameter: the session's choice (dropped when that set was removed), else ``default``.
An unknown name is refused before any view runs: 400 naming the parameter (JSON problem on /api/,
the error page on the console) — a request never falls through to another tier than the one it named.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from brokers.gateway import namesrv_sets
from console.http_errors import Problem


def _refusal(request: HttpRequest, name: str) -> HttpResponse:
    reason = f"no name-server set is called {name[:64]!r}; the console's sets are listed at /api/v1/namesrv-sets"
    problem = Problem(400, "invalid", f"{namesrv_sets.PARAM}: {reason}", {namesrv_sets.PARAM: [reason]})
    if request.path.startswith("/api/"):
        return JsonResponse(problem.as_json(), status=400)
    template = "console/_error.html" if request.headers.get("HX-Request") == "true" else "console/error.html"
    return render(request, template, {"problem": problem}, status=400)


class NamesrvSetMiddleware:
    """Make the request's name-server set current while it runs; ``request.namesrv_set`` is its name."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        asked = request.GET.get(namesrv_sets.PARAM)
        if asked is not None:
            target = namesrv_sets.lookup(asked)
            if target is None:
                return _refusal(request, asked)
            if (
                session is not None
                and not request.path.startswith("/api/")
                and request.user.is_authenticated
                and session.get(namesrv_sets.SESSION_KEY) != target.name
            ):
                session[namesrv_sets.SESSION_KEY] = target.name
        else:
            chosen = session.get(namesrv_sets.SESSION_KEY) if session is not None else None
            target = namesrv_sets.lookup(chosen) if chosen else None
            if chosen and target is None and session is not None:  # chosen came from the session
                session.pop(namesrv_sets.SESSION_KEY, None)  # removed since: back to default
        request.namesrv_set = target.name if target is not None else namesrv_sets.DEFAULT
        with namesrv_sets.scope(None if target is None or target.is_default else target):
            return self.get_response(request)
