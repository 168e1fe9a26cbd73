"""Console pages of alerts: the rules (list, new rule, edit, silence, delete) and the history
(firing and resolved events with what was delivered; acknowledge). Writes need an operator."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from console.actor import actor_from_request
from console.errors import ServiceError, show_on_form
from console.permissions import console_page
from health import services as alert_services
from health.forms import SILENCE_CHOICES, AlertRuleForm, SilenceForm
from health.models import FIRING, RESOLVED, AlertRule

EVENTS_SHOWN = 200


def _rules_context(form: AlertRuleForm) -> dict:
    return {"rules": AlertRule.objects.all(), "form": form, "silence_choices": SILENCE_CHOICES}


@console_page(methods=("GET", "POST"))
def alert_rules_page(request: HttpRequest) -> HttpResponse:
    form = AlertRuleForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                rule = alert_services.alert_rule_save(actor=actor_from_request(request), data=form.rule_input())
            except ServiceError as exc:
                show_on_form(form, exc)
                status = exc.status
            else:
                messages.success(request, f"Alert rule {rule.name} created: the next health scan evaluates it.")
                return redirect("health:alert-rules")
        else:
            status = 400
    return render(request, "health/alert_rules.html", _rules_context(form), status=status)


@console_page(methods=("GET", "POST"))
def alert_rule_page(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the edit form. POST action=save (the form), silence (minutes), enable (enabled=1|0) or delete."""
    rule = alert_services.alert_rule_get(rule_id=pk)
    form = AlertRuleForm.of(rule)
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "save")
        actor = actor_from_request(request)
        try:
            if action == "silence":
                silence = SilenceForm(request.POST)
                if not silence.is_valid():
                    messages.error(request, "minutes: choose how long to silence the rule.")
                    return redirect("health:alert-rules")
                rule = alert_services.alert_rule_silence(
                    actor=actor, rule_id=pk, minutes=silence.cleaned_data["minutes"]
                )
                messages.success(
                    request,
                    f"Alert rule {rule.name} silenced until {rule.silenced_until:%Y-%m-%d %H:%M} UTC."
                    if rule.silenced_until
                    else f"Alert rule {rule.name}: silence ended.",
                )
                return redirect(request.POST.get("next") == "events" and "health:alert-events" or "health:alert-rules")
            if action == "enable":
                enabled = request.POST.get("enabled") == "1"
                rule = alert_services.alert_rule_enable(actor=actor, rule_id=pk, enabled=enabled)
                messages.success(
                    request, f"Alert rule {rule.name} " + ("enabled." if enabled else "disabled: it is not evaluated.")
                )
                return redirect("health:alert-rules")
            if action == "delete":
                alert_services.alert_rule_delete(actor=actor, rule_id=pk)
                messages.success(request, f"Alert rule {rule.name} deleted; its events stay in the history.")
                return redirect("health:alert-rules")
            form = AlertRuleForm(request.POST)
            if form.is_valid():
                rule = alert_services.alert_rule_save(actor=actor, data=form.rule_input(), rule_id=pk)
                messages.success(request, f"Alert rule {rule.name} saved.")
                return redirect("health:alert-rules")
            status = 400
        except ServiceError as exc:
            show_on_form(form, exc)
            status = exc.status
    return render(request, "health/alert_rule.html", {"rule": rule, "form": form}, status=status)


@console_page(methods=("GET", "POST"))
def alert_events_page(request: HttpRequest) -> HttpResponse:
    """GET: the history (?state=firing|resolved). POST event=<id>: acknowledge it."""
    if request.method == "POST":
        raw = request.POST.get("event", "")
        if not raw.isdigit() or len(raw) > 12:
            messages.error(request, "event: must be an event's id.")
            return redirect("health:alert-events")
        try:
            event = alert_services.alert_event_acknowledge(actor=actor_from_request(request), event_id=int(raw))
            messages.success(request, f"Alert {event.rule_name} #{event.pk} acknowledged by {event.acked_by}.")
        except ServiceError as exc:
            messages.error(request, exc.message)
        return redirect("health:alert-events")
    state = request.GET.get("state", "")
    status = 200
    if state not in ("", FIRING, RESOLVED):
        messages.error(request, f"state: must be {FIRING} or {RESOLVED}.")
        state, status = "", 400
    events = alert_services.alert_event_list(state=state)[:EVENTS_SHOWN]
    return render(
        request,
        "health/alert_events.html",
        {"events": events, "state": state, "silence_choices": SILENCE_CHOICES},
        status=status,
    )
