"""The message trace page: search by message id or key, show the message's path from the trace topic.

GET /messages/trace/?msg_id=&trace_topic= parses the form, calls topics.traces.selectors.message_trace,
renders; a refused field shows under it (400), an unknown trace topic is a message on the page (404).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from console.errors import InvalidInput, NotFound, show_on_form
from console.permissions import console_page
from topics.traces.forms import TraceQueryForm
from topics.traces.selectors import message_trace


@console_page()
def trace_page(request: HttpRequest) -> HttpResponse:
    form = TraceQueryForm(request.GET or None)
    trace, status = None, 200
    if form.is_bound and form.is_valid():
        try:
            trace = message_trace(
                msg_id=form.cleaned_data["msg_id"], trace_topic=form.cleaned_data["trace_topic"] or ""
            )
        except (InvalidInput, NotFound) as exc:
            show_on_form(form, exc)
            status = 404 if isinstance(exc, NotFound) else 400
    elif form.is_bound:
        status = 400
    return render(request, "topics/message_trace.html", {"form": form, "trace": trace}, status=status)
