"""The console's alert rule form (the service checks everything again and names the field)."""

from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from brokers.gateway import namesrv_sets
from health.models import KINDS, AlertRule
from health.services import DEFAULT_FOR_MINUTES, DEFAULT_THRESHOLDS, MAX_FOR_MINUTES, RuleInput

KIND_LABELS = {
    "lag_above": _("Lag above N messages"),
    "lag_growing": _("Lag growing by more than N over the minutes below"),
    "no_consumer_online": _("No consumer online"),
    "slave_disconnected": _("Slave disconnected"),
    "dlq_growing": _("DLQ growing by more than N"),
    "topic_lag_above": _("Topic: consumers' lag above N messages"),
    "topic_no_consumer_online": _("Topic: no consumer online"),
    "broker_expired": _("Broker expired"),
    "disk_above": _("Disk used above a ratio"),
}
SILENCE_CHOICES = [(15, _("15 min")), (60, _("1 hour")), (240, _("4 hours")), (1440, _("1 day")), (10080, _("1 week"))]


class AlertRuleForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    kind = forms.ChoiceField(label=_("Kind"), choices=[(k, KIND_LABELS[k]) for k in KINDS], initial="lag_above")
    target = forms.CharField(
        label=_("Target"),
        max_length=255,
        required=False,
        help_text=_(
            "a consumer group that exists (empty: every group, for lag growing and no consumer online); "
            "for topic rules a topic; for broker rules a broker name, or empty for every broker"
        ),
    )
    threshold = forms.FloatField(
        label=_("Threshold"),
        required=False,
        initial=DEFAULT_THRESHOLDS["lag_above"],
        help_text=_(
            "messages; for disk a ratio, 0.85 = 85 % used; for no consumer online with every group, "
            "the backlog a group must have; empty: the kind's default"
        ),
    )
    for_minutes = forms.IntegerField(
        min_value=0,
        max_value=MAX_FOR_MINUTES,
        initial=DEFAULT_FOR_MINUTES,
        required=False,
        label=_("For minutes"),
        help_text=_(
            "how long the condition must hold before it fires (DLQ and lag growing: the window); "
            "empty: the kind's default"
        ),
    )
    webhook_url = forms.CharField(
        max_length=2000,
        required=False,
        label=_("Webhook URL"),
        help_text=_(
            "receives JSON with a text field (Slack, Mattermost); without a webhook or e-mail the rule "
            "shows on the overview and in the history only"
        ),
    )
    emails = forms.CharField(required=False, label=_("E-mail addresses"), help_text=_("comma or space separated"))
    enabled = forms.BooleanField(label=_("Enabled"), required=False, initial=True)
    namesrv_set = forms.ChoiceField(
        label=_("Cluster"), required=False, help_text=_("the name-server set whose health scan evaluates the rule")
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namesrv_set"]
        field.choices = [(t.name, t.name) for t in namesrv_sets.configured()]
        field.initial = self.initial.get("namesrv_set") or namesrv_sets.current_name()

    @classmethod
    def of(cls, rule: AlertRule) -> AlertRuleForm:
        return cls(
            initial={
                "namesrv_set": rule.namesrv_set,
                "name": rule.name,
                "kind": rule.kind,
                "target": rule.target,
                "threshold": rule.threshold,
                "for_minutes": rule.for_minutes,
                "webhook_url": rule.webhook_url,
                "emails": ", ".join(rule.emails),
                "enabled": rule.enabled,
            }
        )

    def rule_input(self) -> RuleInput:
        d = self.cleaned_data
        threshold = DEFAULT_THRESHOLDS.get(d["kind"], 0.0) if d["threshold"] is None else d["threshold"]
        for_minutes = DEFAULT_FOR_MINUTES if d["for_minutes"] is None else d["for_minutes"]
        return RuleInput(
            name=d["name"],
            kind=d["kind"],
            target=d["target"],
            threshold=threshold,
            for_minutes=for_minutes,
            webhook_url=d["webhook_url"],
            emails=tuple(e for e in re.split(r"[,;\s]+", d["emails"]) if e),
            enabled=d["enabled"],
            namesrv_set=d["namesrv_set"] or None,
        )  # none chosen: the current set (an edit: the rule's)


class SilenceForm(forms.Form):
    minutes = forms.TypedChoiceField(label=_("Minutes"), choices=[(0, _("end silence")), *SILENCE_CHOICES], coerce=int)
