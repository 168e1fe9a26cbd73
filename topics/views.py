"""Topic pages: list (htmx search and filter), create, detail, update, delete, test message, safe shrink.

Each view parses, calls one selector or service, and renders. Writes are plain form posts that
redirect (each with a real ``action``); the list's filter form also swaps the table with htmx.
"""

from __future__ import annotations

from dataclasses import replace

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from console.actor import actor_from_request
from console.errors import InvalidInput, ServiceError, show_on_form
from console.permissions import console_page
from console.roles import Role
from topics import selectors, services
from topics.advisor import topic_advice
from topics.messages.selectors import message_tail
from topics.forms import ShrinkForm, TestMessageForm, TopicDeleteForm, TopicFilterForm, TopicForm
from topics.unreachable import UnconfirmedUnreachable

PAGE_SIZE = 100


@console_page()
def topic_list(request: HttpRequest) -> HttpResponse:
    form = TopicFilterForm(request.GET or None)
    topics = selectors.topic_list(**({} if form.refused else form.filters()))
    if form.refused:  # a refused filter lists nothing (console.query_filters)
        topics = replace(topics, rows=())
    page = Paginator(topics.rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "topics": topics,
        "page": page,
        "rows": topics.table(page.object_list),
        "query": query.urlencode(),
    }
    template = "topics/_topic_table.html" if request.htmx else "topics/topic_list.html"
    return render(request, template, context, status=form.status)


def _form_choices() -> dict:
    info = selectors.cluster_info()
    return {"clusters": tuple(sorted(info.clusters)), "brokers": tuple(sorted(info.broker_datas))}


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def topic_create(request: HttpRequest) -> HttpResponse:
    form = TopicForm(request.POST or None, **_form_choices())
    if request.method == "POST" and form.is_valid():
        try:
            topic = services.topic_create(actor=actor_from_request(request), spec=form.spec())
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            messages.success(request, f"Topic {topic.name} created.")
            return redirect("topics:detail", name=topic.name)
    status = 400 if request.method == "POST" else 200
    return render(request, "topics/topic_form.html", {"form": form, "detail": None}, status=status)


@console_page()
def topic_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The topic's queues, groups, offsets and route; the 5 s htmx refresh asks for the queue offsets alone (read live),
    the 10 s one (``?part=consumers``) for the consumer groups with their lag and TPS, the live tail
    (``?part=tail``, every 5 s) for the newest messages, and the advisor's (``?part=advice``, every 30 s: it
    reads the topic, its queues and its groups again)."""
    if request.htmx and request.GET.get("part") == "consumers":  # the consumer groups' 10 s refresh
        return render(request, "topics/_topic_consumers.html", {"consumers": selectors.topic_consumers(name=name)})
    if request.htmx and request.GET.get("part") == "tail":  # the live tail's 5 s refresh
        return render(request, "topics/_message_results.html", {"found": message_tail(topic=name), "tail": True})
    if request.htmx and request.GET.get("part") != "advice":
        return render(request, "topics/_queue_status.html", {"status": selectors.topic_status(name=name)})
    detail = selectors.topic_detail(name=name)
    status, consumers = selectors.topic_status(name=name), selectors.topic_consumers(name=name)
    if request.htmx:  # the advisor's refresh
        return render(
            request, "console/_advice.html", {"advice": topic_advice(detail, status, consumers), "topic": name}
        )
    context = {
        "detail": detail,
        "status": status,
        "route": selectors.topic_route(name=name),
        "consumers": consumers,
        "advice": topic_advice(detail, status, consumers),
        "send_form": TestMessageForm(brokers=tuple(b.broker_name for b in detail.brokers)),
        "delete_form": TopicDeleteForm(detail=detail),
    }
    return render(request, "topics/topic_detail.html", context)


@console_page(methods=("GET", "POST"), read=Role.OPERATOR)
def topic_update(request: HttpRequest, name: str) -> HttpResponse:
    detail = selectors.topic_detail(name=name)
    form = TopicForm(request.POST or None, detail=detail, **_form_choices())
    hidden, confirmed = None, None
    if request.method == "POST" and form.is_valid():
        try:
            services.topic_update(
                actor=actor_from_request(request), spec=form.spec(), confirm_unreachable_messages=form.confirmed_count()
            )
        except UnconfirmedUnreachable as exc:
            hidden, confirmed = (
                exc.hidden,
                exc.confirmed,
            )  # the page names the count per broker, links to safe shrink, asks for the count
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            messages.success(request, f"Topic {name} updated.")
            return redirect("topics:detail", name=name)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "topics/topic_form.html",
        {"form": form, "detail": detail, "hidden": hidden, "confirmed": confirmed},
        status=status,
    )


@console_page(methods=("POST",))
def topic_delete(request: HttpRequest, name: str) -> HttpResponse:
    form = TopicDeleteForm(request.POST, detail=selectors.topic_detail(name=name))
    if not form.is_valid():
        messages.error(request, "Choose where to delete the topic from.")
        return redirect("topics:detail", name=name)
    deletion = services.topic_delete(actor=actor_from_request(request), name=name, **form.target())
    messages.success(request, f"Topic {name} deleted from {', '.join(deletion.brokers)}.")
    if deletion.remaining:
        return redirect("topics:detail", name=name)
    return redirect("topics:list")


@console_page(methods=("POST",))
def topic_send(request: HttpRequest, name: str) -> HttpResponse:
    detail = selectors.topic_detail(name=name)
    form = TestMessageForm(request.POST, brokers=tuple(b.broker_name for b in detail.brokers))
    if form.is_valid():
        try:
            sent = services.topic_send_test_message(actor=actor_from_request(request), name=name, **form.message())
            find = f"{reverse('messages:query')}?{urlencode({'mode': 'id', 'topic': name, 'msg_id': sent.msg_id})}"
            messages.success(
                request,
                format_html(
                    'Sent message {} to {} queue {} at offset {}: client id (UNIQ_KEY) <code data-testid="sent-uniq-key">{}</code>, '
                    'offset message id <code data-testid="sent-offset-id">{}</code>. <a href="{}" data-testid="find-sent">Find it</a>',
                    sent.msg_id,
                    sent.broker_name,
                    sent.queue_id,
                    sent.queue_offset,
                    sent.msg_id,
                    sent.offset_msg_id,
                    find,
                ),
            )
        except ServiceError as exc:
            messages.error(request, exc.message)
    else:
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    return redirect("topics:detail", name=name)


@console_page(methods=("GET", "POST"))
def topic_shrink(request: HttpRequest, name: str) -> HttpResponse:
    """GET: where a shrink stands (htmx refreshes the status); POST: take a step (operator)."""
    form = ShrinkForm(request.POST if request.method == "POST" else (request.GET or None))
    target = form.cleaned_data["target_queue_nums"] if form.is_bound and form.is_valid() else None
    status_code = 200
    if request.method == "POST" and target is not None:
        try:
            services.topic_shrink(
                actor=actor_from_request(request), name=name, target_queue_nums=target, step=form.cleaned_data["step"]
            )
            messages.success(request, f"Shrink of {name}: {form.cleaned_data['step']} queues lowered to {target}.")
            return redirect(f"{reverse('topics:shrink', kwargs={'name': name})}?target_queue_nums={target}")
        except ServiceError as exc:
            show_on_form(form, exc)
            status_code = exc.status
    elif form.is_bound and form.errors:
        status_code = 400
    try:
        status = selectors.topic_shrink_status(name=name, target_queue_nums=target)
    except InvalidInput as exc:  # a target that takes no queue away: say so (once), show the plan
        if not form.errors:
            show_on_form(form, exc)
        status_code = exc.status
        status = selectors.topic_shrink_status(name=name)
    template = "topics/_shrink_status.html" if request.htmx else "topics/shrink.html"
    return render(request, template, {"form": form, "status": status}, status=status_code)
