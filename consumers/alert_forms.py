"""The console's alert rule form (the service checks everything again and names the field)."""
from __future__ import annotations

import re

from django import forms

from brokers.gateway import namesrv_sets
from consumers.alert_models import KINDS, AlertRule
from consumers.alert_services import MAX_FOR_MINUTES, RuleInput

KIND_LABELS = {"lag_above": "Lag above N messages", "no_consumer_online": "No consumer online",
               "dlq_growing": "DLQ growing by more than N",
               "topic_lag_above": "Topic: consumers' lag above N messages", "topic_no_consumer_online": "Topic: no consumer online", "broker_expired": "Broker expired",
               "disk_above": "Disk used above a ratio"}
SILENCE_CHOICES = [(15, "15 min"), (60, "1 hour"), (240, "4 hours"), (1440, "1 day"), (10080, "1 week")]


class AlertRuleForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(choices=[(k, KIND_LABELS[k]) for k in KINDS])
    target = forms.CharField(max_length=255, required=False,
                             help_text="a consumer group; for topic rules a topic; for broker rules a broker name, or empty for every broker")
    threshold = forms.FloatField(required=False, initial=0, help_text="messages; for disk a ratio, 0.85 = 85 % used")
    for_minutes = forms.IntegerField(min_value=0, max_value=MAX_FOR_MINUTES, initial=0, label="For minutes",
                                     help_text="how long the condition must hold before it fires (DLQ: the window)")
    webhook_url = forms.CharField(max_length=2000, required=False, label="Webhook URL",
                                  help_text="receives JSON with a text field (Slack, Mattermost)")
    emails = forms.CharField(required=False, label="E-mail addresses", help_text="comma or space separated")
    enabled = forms.BooleanField(required=False, initial=True)
    namesrv_set = forms.ChoiceField(label="Cluster", required=False,
                                    help_text="the name-server set whose health scan evaluates the rule")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namesrv_set"]
        field.choices = [(t.name, t.name) for t in namesrv_sets.configured()]
        field.initial = self.initial.get("namesrv_set") or namesrv_sets.current_name()

    @classmethod
    def of(cls, rule: AlertRule) -> AlertRuleForm:
        return cls(initial={"namesrv_set": rule.namesrv_set, "name": rule.name, "kind": rule.kind, "target": rule.target, "threshold": rule.threshold,
                            "for_minutes": rule.for_minutes, "webhook_url": rule.webhook_url,
                            "emails": ", ".join(rule.emails), "enabled": rule.enabled})

    def rule_input(self) -> RuleInput:
        d = self.cleaned_data
        return RuleInput(name=d["name"], kind=d["kind"], target=d["target"], threshold=d["threshold"] or 0.0,
                         for_minutes=d["for_minutes"], webhook_url=d["webhook_url"],
                         emails=tuple(e for e in re.split(r"[,;\s]+", d["emails"]) if e), enabled=d["enabled"],
                         namesrv_set=d["namesrv_set"] or None)  # none chosen: the current set (an edit: the rule's)


class SilenceForm(forms.Form):
    minutes = forms.TypedChoiceField(choices=[(0, "end silence"), *SILENCE_CHOICES], coerce=int)
