"""The message trace page's search: a message id (UNIQ_KEY) or key, and the trace topic."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC


class TraceQueryForm(forms.Form):
    msg_id = forms.CharField(
        label=_("Message id or key"),
        max_length=128,
        widget=forms.TextInput(attrs={"placeholder": "7F0000010B2A18B4AAC2...", "size": 40}),
    )
    trace_topic = forms.CharField(
        label=_("Trace topic"),
        required=False,
        max_length=127,
        initial=RMQ_SYS_TRACE_TOPIC,
        widget=forms.TextInput(attrs={"placeholder": RMQ_SYS_TRACE_TOPIC}),
    )
