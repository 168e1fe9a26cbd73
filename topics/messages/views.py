"""Message pages: find messages (by key, by id, by store-time range, paged) and read one.

Each view parses, calls one selector, and renders; the query form swaps the results with htmx.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from console.actor import actor_from_request
from console.errors import InvalidInput, NotFound, ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role
from topics.messages import selectors as message_selectors
from topics.forms import MessageQueryForm
from topics.messages.resend import message_resend as resend_service
from topics.messages.track import message_track
from topics.messages.track_forms import MessageResendForm


@console_page()
def message_query(request: HttpRequest) -> HttpResponse:
    form = MessageQueryForm(request.GET or None)
    found, status = None, 200
    if form.is_bound and form.is_valid():
        query = form.cleaned_data
        try:
            if query["mode"] == "id":
                view = message_selectors.message_detail(msg_id=query["msg_id"], topic=query["topic"] or None)
                target = reverse("messages:detail", kwargs={"msg_id": view.msg_id})
                if request.htmx:
                    return render(
                        request, "topics/_message_results.html", {"form": form, "found": None, "single": view}
                    )
                return redirect(f"{target}?{urlencode({'topic': view.topic})}")
            if query["mode"] == "key":
                found = message_selectors.message_query_by_key(
                    topic=query["topic"], key=query["key"], begin_ms=query["begin"], end_ms=query["end"]
                )
            else:
                found = message_selectors.message_query_by_time(
                    topic=query["topic"],
                    begin_ms=query["begin"],
                    end_ms=query["end"],
                    page=query["page"] or 1,
                    page_size=query["page_size"],
                )
        except (InvalidInput, NotFound) as exc:
            show_on_form(form, exc)
    if form.is_bound and form.errors:
        status = 400
    page_query = request.GET.copy()
    page_query.pop("page", None)
    context = {"form": form, "found": found, "query": page_query.urlencode()}
    return render(
        request, "topics/_message_results.html" if request.htmx else "topics/message_query.html", context, status=status
    )


@console_page()
def message_detail(request: HttpRequest, msg_id: str) -> HttpResponse:
    """The message, and each group of its topic with its consume state for it (and, for operators, a resend link)."""
    track = message_track(msg_id=msg_id, topic=request.GET.get("topic") or None)
    return render(request, "topics/message_detail.html", {"message": track.message, "track": track})


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def message_resend(request: HttpRequest, msg_id: str) -> HttpResponse:
    """GET: the confirm step (the message, the group's state, its online clients); POST: resend (operator), the answer."""
    data = request.POST if request.method == "POST" else request.GET
    topic = data.get("topic") or None
    track = message_track(msg_id=msg_id, topic=topic)
    row = next((g for g in track.groups if g.group == data.get("group")), None)
    form = MessageResendForm(
        data if request.method == "POST" else None,
        clients=row.clients if row else (),
        initial={"topic": topic or "", "group": data.get("group", "")},
    )
    result, status = None, 200
    if request.method == "POST":
        try:  # the service checks every field against the cluster (a bound form's choices are the same list)
            result = resend_service(
                actor=actor_from_request(request),
                msg_id=msg_id,
                topic=topic,
                group=data.get("group", ""),
                client_id=data.get("client_id", ""),
            )
        except ServiceError as exc:
            form.is_valid()
            show_on_form(form, exc)
            status = exc.status
    elif data.get("group") and row is None:
        form.add_error(None, f"{data.get('group')} does not consume topic {track.message.topic}.")
        status = 400
    context = {"message": track.message, "track": track, "row": row, "form": form, "result": result}
    return render(request, "topics/message_resend.html", context, status=status)
