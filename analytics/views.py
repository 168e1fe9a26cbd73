"""Dashboard pages: the overview (throughput per topic, backlog per group, top lists, trends),
a topic's queues, a group's queues, and the "Refresh now" control with its progress.

The charts are drawn in the browser by static/js/dashboards.js from the §4 JSON of
/api/v1/dashboards/... (docs/analytics.md); the pages render the same envelopes' tables, so the
figures are there without JavaScript. A page and its htmx swap share the ``_<page>.html``
template; the refresh control's fragment is ``_refresh.html``, polled every second while a run
is queued or running.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme, urlencode

from analytics import selectors, services
from analytics.forms import RANGES, RangeForm
from analytics.models import RefreshRun
from analytics.series_table import series_rows
from console.actor import actor_from_request
from console.errors import ServiceError
from console.permissions import console_page

ACTIVE = tuple(str(status) for status in RefreshRun.ACTIVE)
LIVE_POLL_S = 15  # between runs the page asks this often whether a newer result exists (beat refreshes every minute)
REFRESHED_EVENT = "dashboards-refreshed"  # htmx event: the page body reloads its tables and charts


def _range(request: HttpRequest) -> RangeForm:
    """The ``?range=`` filter; a page answers :func:`_range_refused` when it is refused."""
    return RangeForm(request.GET or None)


def _range_refused(request: HttpRequest, form: RangeForm) -> HttpResponse:
    """400 with the error naming the range and the accepted ones, and no charts (never the default range's)."""
    context = {"form": form, "range": "", "ranges": RANGES}
    template = "analytics/_range_refused.html" if request.htmx else "analytics/range_refused.html"
    return render(request, template, context, status=form.status)


def _page_or_partial(request: HttpRequest, page: str, partial: str, context: dict) -> HttpResponse:
    context["coverage"] = (
        selectors.coverage()
    )  # another set's pages say whose figures these are (analytics/_coverage.html)
    return render(request, partial if request.htmx else page, context)


@console_page()
def overview(request: HttpRequest) -> HttpResponse:
    form = _range(request)
    if form.refused:
        return _range_refused(request, form)
    range_ = form.filters()
    system = (
        request.GET.get("system") == "1"
    )  # the broker's own topics on the throughput chart (off: the trace topic dwarfs the rest)
    throughput = selectors.throughput_view(range=range_, by="topic", system=system)
    backlog = selectors.backlog_view(range=range_, by="group")
    context = {
        "range": range_,
        "ranges": RANGES,
        "throughput": throughput,
        "backlog": backlog,
        "system": system,
        **_refresh_context(throughput["state"]),
    }
    return _page_or_partial(request, "analytics/overview.html", "analytics/_overview.html", context)


@console_page()
def topic(request: HttpRequest, topic: str) -> HttpResponse:
    form = _range(request)
    if form.refused:
        return _range_refused(request, form)
    range_ = form.filters()
    throughput = selectors.throughput_view(range=range_, by="queue", topic=topic)
    context = {
        "range": range_,
        "ranges": RANGES,
        "topic": topic,
        "throughput": throughput,
        "chart_params": urlencode({"by": "queue", "topic": topic}),
        **_refresh_context(throughput["state"]),
        "rows": series_rows(throughput["series"], metrics=("msgs_per_s", "bytes_per_s")),
    }
    return _page_or_partial(request, "analytics/topic.html", "analytics/_topic.html", context)


@console_page()
def group(request: HttpRequest, group: str) -> HttpResponse:
    form = _range(request)
    if form.refused:
        return _range_refused(request, form)
    range_ = form.filters()
    backlog = selectors.backlog_view(range=range_, by="queue", group=group)
    context = {
        "range": range_,
        "ranges": RANGES,
        "group": group,
        "backlog": backlog,
        "chart_params": urlencode({"by": "queue", "group": group}),
        **_refresh_context(backlog["state"]),
        "trends": backlog["trends"],
        "rows": series_rows(backlog["series"], metrics=("backlog", "consume_rate", "produce_rate")),
    }
    return _page_or_partial(request, "analytics/group.html", "analytics/_group.html", context)


@console_page(methods=("GET", "POST"))
def refresh(request: HttpRequest) -> HttpResponse:
    """GET (htmx): the refresh fragment, of run ``?run=`` or the active one; POST: start a run (operator).

    Without htmx, GET goes to the overview and POST redirects back to the page it came from
    (``next``) with the outcome as a message.
    """
    if request.method == "POST":
        return _refresh_request(request)
    if not request.htmx:
        return redirect("dashboards:overview")
    run_id = request.GET.get("run", "")
    run = selectors.refresh_run(run_id=int(run_id)) if run_id.isdigit() else None
    response = _refresh_fragment(request, run=run)
    if run is not None and _status(run) not in ACTIVE:
        response["HX-Trigger"] = REFRESHED_EVENT  # the poll that sees the end: reload the charts
    elif "seen" in request.GET and (selectors.dashboard_state()["last_refresh_at"] or "") != request.GET["seen"]:
        response["HX-Trigger"] = REFRESHED_EVENT  # a newer result (beat's live refresh) than the page shows
    return response


def _refresh_request(request: HttpRequest) -> HttpResponse:
    try:
        run = services.dashboard_refresh_request(actor=actor_from_request(request))
    except ServiceError as exc:  # Redis down (503): say so in the page, keep the last result
        if not request.htmx:
            messages.error(request, exc.message)
            return redirect(_next(request))
        return _refresh_fragment(request, run=None, error=exc.message, status=exc.status)
    if not request.htmx:
        messages.success(request, f"Dashboard refresh #{_field(run, 'id')} {_status(run)}.")
        return redirect(_next(request))
    return _refresh_fragment(request, run=run)


def _refresh_fragment(request: HttpRequest, *, run, error: str | None = None, status: int = 200) -> HttpResponse:
    context = _refresh_context(selectors.dashboard_state(), run=run, error=error)
    return render(request, "analytics/_refresh.html", context, status=status)


def _refresh_context(state, *, run=None, error: str | None = None) -> dict:
    """What ``_refresh.html`` shows: the state, the run (given, else the state's latest), an error."""
    if run is None:
        run = _field(state, "run")
    return {
        "state": state,
        "run": run,
        "run_active": run is not None and _status(run) in ACTIVE,
        "error": error,
        "live_poll_s": LIVE_POLL_S,
    }


def _next(request: HttpRequest) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return "dashboards:overview"


def _field(obj, name: str):
    """A field of a run or state: a dataclass, a model or a dict (the JSON envelope's state)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _status(run) -> str:
    return str(_field(run, "status"))
