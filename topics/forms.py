"""The console's topic forms: the same rules (topics.rules) and the same TopicSpec as the API.

Broker mode has one row of fields per broker, named like the API's dotted error paths
(``brokers.broker-a.read_queue_nums``), so a service's refusal lands under the right field.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS
from brokers.engine.common.topic_validator import broker_system_topics
from console.errors import InvalidInput
from console.query_filters import ChoiceFilter, FilterForm
from console.times import parse_time_ms

from topics.rules import (
    DEFAULT_PERM,
    DEFAULT_QUEUE_NUMS,
    MESSAGE_TYPE_CHOICES,
    MESSAGE_TYPES,
    PERM_CHOICES,
    validate_new_topic_name,
    validate_queue_nums,
    validate_topic_name,
)
from topics.types import TOPIC_TYPES, QueueSpec, TopicDetail, TopicSpec

MODES = (
    ("cluster", _("cluster mode: the same counts on every broker of a cluster")),
    ("broker", _("broker mode: counts per broker")),
)


def _count(**kwargs) -> forms.IntegerField:
    return forms.IntegerField(
        validators=[validate_queue_nums],
        widget=forms.NumberInput(attrs={"min": MIN_QUEUE_NUMS, "max": MAX_QUEUE_NUMS}),
        **kwargs,
    )


def _perm(**kwargs) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(choices=PERM_CHOICES, coerce=int, **kwargs)


@dataclass(frozen=True)
class BrokerRow:
    broker_name: str
    enabled: forms.BoundField
    read_queue_nums: forms.BoundField
    write_queue_nums: forms.BoundField
    perm: forms.BoundField


class TopicForm(forms.Form):
    """Create (``detail=None``) or update a topic, in cluster or broker mode."""

    name = forms.CharField(
        label=_("Name"), required=False, strip=False
    )  # the rule (clean_name) says why a name is refused
    mode = forms.ChoiceField(label=_("Mode"), choices=MODES, initial="cluster", widget=forms.RadioSelect)
    cluster = forms.CharField(label=_("Cluster"), required=False, widget=forms.Select)
    read_queue_nums = _count(required=False, initial=DEFAULT_QUEUE_NUMS, label=_("Read queues"))
    write_queue_nums = _count(required=False, initial=DEFAULT_QUEUE_NUMS, label=_("Write queues"))
    perm = _perm(required=False, initial=DEFAULT_PERM, label=_("Perm"))
    # RocketMQ 5's message.type: what 5.x producers may send (4.x clients are not checked)
    message_type = forms.ChoiceField(
        label=_("Message type"), required=False, choices=MESSAGE_TYPE_CHOICES, initial=MESSAGE_TYPES[0]
    )
    confirm_unreachable_messages = forms.IntegerField(
        required=False,
        min_value=0,
        label=_("Messages to make unreachable"),
        widget=forms.NumberInput(attrs={"min": 0, "autocomplete": "off", "data-testid": "confirm-count"}),
    )

    def __init__(
        self, *args, clusters: tuple[str, ...], brokers: tuple[str, ...], detail: TopicDetail | None = None, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.detail = detail
        self.cluster_names = clusters
        self.broker_names = brokers
        self.fields["cluster"].widget.choices = [(c, c) for c in clusters]
        current = {b.broker_name: b for b in detail.brokers} if detail else {}
        if detail is None:
            del self.fields["confirm_unreachable_messages"]  # a new topic hides nothing
        else:
            self.fields["name"].disabled = True
            self.initial.setdefault("name", detail.name)
            self.initial.setdefault("mode", "broker")
            # brokers that disagree (or did not answer): nothing chosen, nothing changed unless one is
            self.fields["message_type"].choices = [("", _("as it is on each broker"))] + list(MESSAGE_TYPE_CHOICES)
            self.initial.setdefault("message_type", detail.message_type if detail.message_type in MESSAGE_TYPES else "")
        for broker in brokers:
            cur = current.get(broker)
            prefix = f"brokers.{broker}"
            self.fields[f"{prefix}.enabled"] = forms.BooleanField(
                required=False, initial=cur is not None or detail is None, label=broker
            )
            self.fields[f"{prefix}.read_queue_nums"] = _count(
                required=False, initial=cur.read_queue_nums if cur else DEFAULT_QUEUE_NUMS, label=_("Read queues")
            )
            self.fields[f"{prefix}.write_queue_nums"] = _count(
                required=False, initial=cur.write_queue_nums if cur else DEFAULT_QUEUE_NUMS, label=_("Write queues")
            )
            self.fields[f"{prefix}.perm"] = _perm(
                required=False, initial=cur.perm if cur else DEFAULT_PERM, label=_("Perm")
            )

    def clean_name(self) -> str:
        name = self.cleaned_data.get("name") or ""
        if self.detail:
            return validate_topic_name(name)
        return validate_new_topic_name(name, broker_system_topics(self.cluster_names, self.broker_names))

    @property
    def cluster_fields(self) -> list[forms.BoundField]:
        return [self[f] for f in ("cluster", "read_queue_nums", "write_queue_nums", "perm")]

    @property
    def broker_rows(self) -> list[BrokerRow]:
        return [
            BrokerRow(
                b, *(self[f"brokers.{b}.{f}"] for f in ("enabled", "read_queue_nums", "write_queue_nums", "perm"))
            )
            for b in self.broker_names
        ]

    def clean(self):
        data = super().clean()
        if data.get("mode") == "cluster":
            if not data.get("cluster"):
                self.add_error("cluster", _("choose a cluster."))
            for f in ("read_queue_nums", "write_queue_nums", "perm"):
                if data.get(f) is None and f not in self.errors:
                    self.add_error(f, _("This field is required."))
        if data.get("mode") == "broker":
            for f in ("cluster", "read_queue_nums", "write_queue_nums", "perm"):  # hidden in broker mode
                self.errors.pop(f, None)
            chosen = [b for b in self.broker_names if data.get(f"brokers.{b}.enabled")]
            if not chosen:
                self.add_error(None, _("choose at least one broker."))
            for b in chosen:
                for f in ("read_queue_nums", "write_queue_nums", "perm"):
                    if data.get(f"brokers.{b}.{f}") is None and f"brokers.{b}.{f}" not in self.errors:
                        self.add_error(f"brokers.{b}.{f}", _("This field is required."))
        return data

    def confirmed_count(self) -> int | None:
        """The count of hidden messages the operator typed to confirm an edit, if any."""
        return self.cleaned_data.get("confirm_unreachable_messages")

    def spec(self) -> TopicSpec:
        data = self.cleaned_data
        name = self.detail.name if self.detail else data["name"]
        message_type = data.get("message_type") or None
        if data["mode"] == "cluster":
            return TopicSpec(
                name=name,
                cluster=data["cluster"],
                message_type=message_type,
                queues=QueueSpec(data["read_queue_nums"], data["write_queue_nums"], data["perm"]),
            )
        brokers = tuple(
            (
                b,
                QueueSpec(
                    data[f"brokers.{b}.read_queue_nums"],
                    data[f"brokers.{b}.write_queue_nums"],
                    data[f"brokers.{b}.perm"],
                ),
            )
            for b in self.broker_names
            if data.get(f"brokers.{b}.enabled")
        )
        return TopicSpec(name=name, brokers=brokers, message_type=message_type)


# the types' names on the page (the list's tags translate the same msgids); the API keeps the values
TOPIC_TYPE_LABELS = {"normal": _("normal"), "retry": _("retry"), "dlq": _("dlq"), "system": _("system")}


class TopicFilterForm(FilterForm):
    q = forms.CharField(required=False, label=_("Search"))
    type = ChoiceFilter(
        label=_("Type"), choices=[("", _("all types"))] + [(t, TOPIC_TYPE_LABELS[t]) for t in TOPIC_TYPES]
    )

    def filters_from(self, data: dict) -> dict:
        kind = data.get("type")
        return {"search": data.get("q", ""), "types": frozenset({kind}) if kind else None}


class TopicDeleteForm(forms.Form):
    scope = forms.ChoiceField(label=_("Scope"), choices=(("all", _("everywhere")),), initial="all")

    def __init__(self, *args, detail: TopicDetail, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        choices = [("all", _("from every broker"))]
        choices += [(f"cluster:{c}", _("from cluster %(name)s") % {"name": c}) for c in detail.clusters]
        choices += [
            (f"broker:{b.broker_name}", _("from broker %(name)s only") % {"name": b.broker_name})
            for b in detail.brokers
        ]
        self.fields["scope"].choices = choices

    def target(self) -> dict:
        kind, _, value = self.cleaned_data["scope"].partition(":")
        return {kind: value} if kind in ("cluster", "broker") else {}


class TestMessageForm(forms.Form):
    body = forms.CharField(label=_("Body"), widget=forms.Textarea(attrs={"rows": 3}), strip=False, max_length=65536)
    tags = forms.CharField(label=_("Tags"), required=False, max_length=255)
    keys = forms.CharField(label=_("Keys"), required=False, max_length=255)
    broker = forms.ChoiceField(label=_("Broker"), required=False, choices=())

    def __init__(self, *args, brokers: tuple[str, ...], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["broker"].choices = [("", _("any broker"))] + [(b, b) for b in brokers]

    def message(self) -> dict:
        data = self.cleaned_data
        return {"body": data["body"], "tags": data["tags"], "keys": data["keys"], "broker": data["broker"] or None}


class ShrinkForm(forms.Form):
    """A safe-shrink step (POST) or the target to plan for (GET)."""

    target_queue_nums = _count(required=True, label=_("Queues per broker after the shrink"))
    step = forms.ChoiceField(
        label=_("Step"),
        choices=(("write", _("lower the write queues")), ("read", _("lower the read queues"))),
        required=False,
    )


PAGE_SIZES = (20, 50, 100)  # by time range: messages per page the form offers


class MessageQueryForm(forms.Form):
    """Find messages: by key (topic and key), by id, or by store-time range (topic, begin, end)."""

    mode = forms.ChoiceField(
        label=_("Mode"),
        choices=(("key", _("by key")), ("id", _("by message id")), ("time", _("by time range"))),
        initial="key",
        widget=forms.RadioSelect,
    )
    topic = forms.CharField(label=_("Topic"), required=False)
    key = forms.CharField(label=_("Key"), required=False)
    msg_id = forms.CharField(required=False, label=_("Message id"))
    begin = forms.CharField(
        required=False, label=_("Stored from"), widget=forms.TextInput(attrs={"placeholder": "2024-05-01T12:00:00Z"})
    )
    end = forms.CharField(
        required=False, label=_("Stored to"), widget=forms.TextInput(attrs={"placeholder": "2024-05-01T13:00:00Z"})
    )
    page = forms.IntegerField(label=_("Page"), required=False, min_value=1, widget=forms.HiddenInput)
    page_size = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=PAGE_SIZES[0], label=_("Per page"), choices=[(n, n) for n in PAGE_SIZES]
    )

    def _time(self, name: str) -> int | None:
        value = self.cleaned_data.get(name)
        if not value:
            return None
        try:
            return parse_time_ms(value, name)
        except InvalidInput as exc:
            self.add_error(name, exc.fields[name][0])
            return None

    def clean(self):
        data = super().clean()
        mode = data.get("mode")
        data["begin"], data["end"] = self._time("begin"), self._time("end")
        needed = {"key": ("topic", "key"), "id": ("msg_id",), "time": ("topic", "begin", "end")}.get(mode, ())
        for name in needed:
            if not data.get(name) and name not in self.errors:
                self.add_error(name, _("This field is required."))
        if mode in ("key", "time") and data.get("topic") and "topic" not in self.errors:
            try:
                validate_topic_name(data["topic"])
            except ValidationError as exc:
                self.add_error("topic", exc.messages[0])
        return data
