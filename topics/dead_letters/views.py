"""The dead-letter page of a consumer group: its DLQ newest first, resend selected ones (operator,
after a confirmation), export a time range as JSON lines. Each view parses, calls one selector or
service, and renders; refusals name the field and change nothing."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext

from console.actor import actor_from_request
from console.errors import InvalidInput, ServiceError
from console.permissions import console_page
from topics.dead_letters.api import export_response
from topics.dead_letters.forms import DeadLetterExportForm, DeadLetterPageForm
from topics.dead_letters.selectors import dead_letter_export, dead_letter_page
from topics.dead_letters.services import dead_letter_resend
from topics.dead_letters.types import MAX_EXPORT, MAX_RESEND, NO_REASON_STORED
from topics.messages.selectors import DEFAULT_PAGE_SIZE


def _page(
    request: HttpRequest, name: str, *, page: int = 1, page_size: int = DEFAULT_PAGE_SIZE, status: int = 200, **extra
) -> HttpResponse:
    context = {
        "name": name,
        "letters": dead_letter_page(group=name, page=page, page_size=page_size),
        "no_reason": gettext(NO_REASON_STORED),
        "max_resend": MAX_RESEND,
        "max_export": MAX_EXPORT,
        "export_form": extra.pop("export_form", DeadLetterExportForm()),
        **extra,
    }
    return render(request, "topics/dead_letters.html", context, status=status)


@console_page()
def dead_letters(request: HttpRequest, name: str) -> HttpResponse:
    form = DeadLetterPageForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        return _page(request, name, status=400, errors={f: list(e) for f, e in form.errors.items()})
    q = form.cleaned_data if form.is_bound else {}
    return _page(request, name, page=q.get("page") or 1, page_size=q.get("page_size") or DEFAULT_PAGE_SIZE)


@console_page(methods=("POST",))
def dead_letter_resend_page(request: HttpRequest, name: str) -> HttpResponse:
    """POST msg_ids (the ticked rows): resend them, then show the page with what became of each."""
    try:
        resend = dead_letter_resend(
            actor=actor_from_request(request), group=name, msg_ids=request.POST.getlist("msg_ids")
        )
    except InvalidInput as exc:
        return _page(request, name, status=400, errors=exc.fields)
    except ServiceError as exc:
        return _page(request, name, status=exc.status, errors={"__all__": [exc.message]})
    return _page(request, name, resend=resend)


@console_page()
def dead_letter_export_page(request: HttpRequest, name: str) -> HttpResponse:
    form = DeadLetterExportForm(request.GET)
    if not form.is_valid():
        return _page(request, name, status=400, export_form=form)
    q = form.cleaned_data
    try:
        export = dead_letter_export(group=name, begin_ms=q["begin"], end_ms=q["end"], limit=q["limit"] or MAX_EXPORT)
    except InvalidInput as exc:
        exc.add_to_form(form)
        return _page(request, name, status=400, export_form=form)
    return export_response(export)
