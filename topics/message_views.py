"""Message pages: find messages (by key, by id, by store-time range, paged) and read one.

Each view parses, calls one selector, and renders; the query form swaps the results with htmx.
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from console.errors import InvalidInput, NotFound, show_on_form
from console.permissions import console_page
from topics import message_selectors
from topics.forms import MessageQueryForm


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
                    return render(request, "topics/_message_results.html", {"form": form, "found": None, "single": view})
                return redirect(f"{target}?{urlencode({'topic': view.topic})}")
            if query["mode"] == "key":
                found = message_selectors.message_query_by_key(topic=query["topic"], key=query["key"], begin_ms=query["begin"], end_ms=query["end"])
            else:
                found = message_selectors.message_query_by_time(topic=query["topic"], begin_ms=query["begin"], end_ms=query["end"], page=query["page"] or 1,
                                                                  page_size=query["page_size"])
        except (InvalidInput, NotFound) as exc:
            show_on_form(form, exc)
    if form.is_bound and form.errors:
        status = 400
    page_query = request.GET.copy()
    page_query.pop("page", None)
    context = {"form": form, "found": found, "query": page_query.urlencode()}
    return render(request, "topics/_message_results.html" if request.htmx else "topics/message_query.html", context, status=status)


@console_page()
def message_detail(request: HttpRequest, msg_id: str) -> HttpResponse:
    view = message_selectors.message_detail(msg_id=msg_id, topic=request.GET.get("topic") or None)
    return render(request, "topics/message_detail.html", {"message": view})
