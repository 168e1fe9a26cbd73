"""The console's consumer forms: the same rules (consumers.rules) as the API serializers.

The allocation form is read with GET (it changes nothing, and a page of inputs is a link one
can share); every field is optional and defaults to a small hypothetical group.
"""

from __future__ import annotations

from typing import Any

from datetime import datetime, timezone

from django import forms
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from console.errors import InvalidInput, show_on_form
from console.query_filters import ChoiceFilter, FilterForm
from console.tracked_jobs import STATUS_TEXTS
from consumers import rules
from brokers.engine.client.allocation import strategy_names
from consumers.allocation import Scenario
from consumers.rebalance.selectors import JobFilter
from consumers.reset_target import RESET_TO_LABELS, reset_target
from consumers.types import GROUP_KINDS

DEFAULT_LAYOUT = "broker-a:8, broker-b:8"
DEFAULT_CLIENTS = "4"
HYPOTHETICAL_TOPIC = "Preview"  # the topic name of a made-up layout
MADE_UP_PREFIX = "client-"
SCENARIO_FIELDS = {
    "scenario.add_consumers": "add_clients",
    "scenario.remove_consumers": "remove_clients",
    "scenario.brokers_down": "brokers_down",
    "scenario.queue_counts": "queue_counts",
    "params.broker_rooms": "rooms",
    "params.consumer_rooms": "rooms",
}


GROUP_ORDERINGS = (
    "name",
    "-name",
    "lag",
    "-lag",
    "tps",
    "-tps",
    "delay",
    "-delay",
)  # consumers.selectors.GROUP_ORDERING, ascending or descending


class GroupFilterForm(FilterForm):
    q = forms.CharField(required=False, label=_("Search"))
    kind = ChoiceFilter(label=_("Kind"), choices=[("", _("all groups"))] + [(k, k) for k in GROUP_KINDS])
    ordering = ChoiceFilter(
        label=_("Order"),
        choices=[("", "name")] + [(o, o) for o in GROUP_ORDERINGS],
        required=False,
        widget=forms.HiddenInput,
    )

    def filters_from(self, data: dict) -> dict:
        kind = data.get("kind")
        return {"search": data.get("q", ""), "kinds": frozenset({kind}) if kind else None}


class ResetOffsetForm(forms.Form):
    """The reset page: a topic and where to (consumers.reset_target: the same rule as the API)."""

    topic = forms.ChoiceField(label=_("Topic"), choices=())
    to = forms.ChoiceField(
        label=_("Reset to"),
        choices=list(RESET_TO_LABELS.items()),
        initial="time",
        required=False,
        widget=forms.RadioSelect,
    )
    timestamp = forms.CharField(
        label=_("Time"),
        required=False,
        help_text=_("a time (2024-05-01T12:00:00Z, no zone = UTC) or ms since the epoch"),
        widget=forms.TextInput(attrs={"placeholder": "2024-05-01T12:00:00Z"}),
    )
    broker = forms.ChoiceField(label=_("Broker"), choices=(), required=False)
    queue_id = forms.CharField(
        label=_("Queue"), required=False, widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 4})
    )
    offset = forms.CharField(
        label=_("Offset"), required=False, widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 12})
    )

    def __init__(self, *args, topics: tuple[str, ...], brokers: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["topic"].choices = [(t, t) for t in topics]
        self.fields["broker"].choices = [("", "—")] + [(b, b) for b in brokers]

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            data["target"] = reset_target(
                data.get("to"),
                timestamp=data.get("timestamp"),
                broker=data.get("broker"),
                queue_id=data.get("queue_id"),
                offset=data.get("offset"),
            )
        except InvalidInput as exc:
            for name, reasons in exc.fields.items():
                self.add_error(name if name in self.fields else None, reasons[0])
        return data


def _text(label: str, **kwargs) -> forms.CharField:
    return forms.CharField(required=False, label=label, strip=True, **kwargs)


class AllocationForm(forms.Form):
    """Inputs of the allocation page: queues, clients, strategy and parameters, what-if, view."""

    topic = _text(
        _("Live topic"), help_text=_("a topic's name, e.g. TopicTest: its readable queues; empty: the layout below")
    )
    layout = _text(
        _("Layout (broker:queues)"),
        initial=DEFAULT_LAYOUT,
        help_text=_("broker:queues, separated by spaces or commas, e.g. broker-a:8 broker-b:8"),
    )
    group = _text(_("Live group"), help_text=_("a consumer group's name: its members online; empty: the clients below"))
    clients = forms.CharField(
        required=False,
        label=_("Clients"),
        initial=DEFAULT_CLIENTS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "client ids separated by spaces or new lines (e.g. 10.0.0.1@worker-1 10.0.0.2@worker-2), "
            "or a number N for N made-up clients"
        ),
    )
    strategy = forms.ChoiceField(
        label=_("Strategy"),
        choices=[(n, n) for n in strategy_names()],
        initial="AVG",
        required=False,
        help_text=_("RocketMQ's allocation strategy the clients use"),
        error_messages={
            "invalid_choice": format_lazy(
                _("%(value)s is not a strategy; use one of {names}."), names=", ".join(strategy_names())
            )
        },
    )
    virtual_node_cnt = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=rules.MAX_VIRTUAL_NODES,
        initial=10,
        label=_("Virtual nodes"),
        help_text=format_lazy(
            _("ring points per client, 1 to {most} (RocketMQ's default: 10)"), most=rules.MAX_VIRTUAL_NODES
        ),
    )
    message_queue_list = _text(
        _("CONFIG queues"), help_text=_("the queues every client consumes, broker:queue, e.g. broker-a:0 broker-b:3")
    )
    consumeridcs = _text(
        _("MACHINE_ROOM rooms"),
        help_text=_("the machine rooms consumed, e.g. hz sh; a broker named hz@broker-a is in room hz"),
    )
    inner = forms.ChoiceField(
        choices=[(n, n) for n in rules.NEARBY_INNER],
        initial="AVG",
        required=False,
        label=_("NEARBY inner"),
        error_messages={
            "invalid_choice": format_lazy(
                _("%(value)s is not a strategy; use one of {names}."), names=", ".join(rules.NEARBY_INNER)
            )
        },
        help_text=_("the strategy used inside each machine room"),
    )
    rooms = _text(
        _("NEARBY rooms"),
        help_text=_(
            "where each broker and client runs, name=room, e.g. broker-a=hz broker-b=sh client-1=hz; "
            "names left out use their prefix before @ (hz@broker-a is in hz)"
        ),
    )
    add_clients = _text(_("What-if: add clients"), help_text=_("client ids that join, e.g. client-9 10.0.0.9@worker-9"))
    remove_clients = _text(_("remove clients"), help_text=_("client ids that leave, e.g. client-1"))
    brokers_down = _text(_("brokers down"), help_text=_("broker names whose queues go away, e.g. broker-b"))
    queue_counts = _text(
        _("queue counts"), help_text=_("a broker's new number of queues, broker:queues, e.g. broker-a:4")
    )
    view = forms.ChoiceField(
        label=_("View"),
        choices=(("grid", _("one strategy")), ("compare", _("every strategy"))),
        initial="grid",
        required=False,
        widget=forms.RadioSelect,
    )

    def __init__(self, data=None, *args, **kwargs) -> None:
        if data is not None:  # show the values the page uses for fields left empty
            data = data.copy()
            for name, default in (("view", "grid"), ("virtual_node_cnt", "10")):
                if not data.get(name):
                    data[name] = default
        super().__init__(data, *args, **kwargs)
        for (
            name,
            f,
        ) in self.fields.items():  # the page shows each hint beside its field (templates/consumers/_alloc_field.html)
            if f.help_text:
                f.widget.attrs["aria-describedby"] = f"hint-{name}"

    def value(self, name: str):
        """A cleaned value, or the field's initial when the form was left empty."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        value = data.get(name)
        return value if value not in (None, "") else self.fields[name].initial

    def _params(self, strategy: str, topic: str) -> dict:
        if strategy == "CONSISTENT_HASH":
            return {"virtual_node_cnt": self.value("virtual_node_cnt")}
        if strategy == "CONFIG":  # left empty: the rule says what is missing
            queues = rules.parse_queue_words(self.value("message_queue_list") or "", topic, "message_queue_list")
            return {"message_queue_list": queues} if queues else {}
        if strategy == "MACHINE_ROOM":
            rooms = rules.split_words(self.value("consumeridcs") or "")
            return {"consumeridcs": rooms} if rooms else {}
        if strategy == "MACHINE_ROOM_NEARBY":
            room_map = rules.parse_rooms(self.value("rooms") or "", "rooms")
            return {"inner": self.value("inner"), "broker_rooms": room_map, "consumer_rooms": room_map}
        return {}

    def _scenario(self) -> Scenario | None:
        add, remove = rules.split_words(self.value("add_clients")), rules.split_words(self.value("remove_clients"))
        down, counts = (
            rules.split_words(self.value("brokers_down")),
            rules.parse_counts(self.value("queue_counts") or "", "queue_counts"),
        )
        if not (add or remove or down or counts):
            return None
        return Scenario(
            add_consumers=tuple(add), remove_consumers=tuple(remove), brokers_down=tuple(down), queue_counts=counts
        )

    def _queues(self, topic: str) -> list[dict]:
        counts = rules.parse_counts(self.value("layout"), "layout")
        if not counts:
            raise InvalidInput("layout", "give at least one broker:queues, e.g. broker-a:8.")
        return [{"topic": topic, "broker_name": b, "queue_id": i} for b, n in counts.items() for i in range(n)]

    def _cids(self) -> tuple[str, ...]:
        words = rules.split_words(self.value("clients"))
        if len(words) == 1 and words[0].isdigit():
            n = int(words[0])
            if not 1 <= n <= rules.MAX_CLIENTS:
                raise InvalidInput("clients", f"from 1 to {rules.MAX_CLIENTS} made-up clients.")
            return tuple(f"{MADE_UP_PREFIX}{i:0{len(str(n))}d}" for i in range(1, n + 1))
        return rules.parse_cids(words, "clients")

    def inputs(self) -> dict | None:
        """The keyword arguments of ``selectors.allocation_input``, or None with every refusal on the form (each
        part is checked, so one submit shows what is wrong with the queues, the clients, the strategy and the what-if)."""
        valid = (
            self.is_valid()
        )  # a field Django refused falls back to its initial below, so the other parts are still checked
        refusals: list[InvalidInput] = []

        def check(key: str, read) -> None:
            try:
                out[key] = read()
            except InvalidInput as exc:
                refusals.append(exc)

        topic = self.value("topic")
        strategy = self.value("strategy")
        out: dict = {"strategy": strategy}
        check("scenario", self._scenario)
        if topic:
            check("topic", lambda: rules.checked_topic(topic))
        else:
            check("queues", lambda: rules.parse_queues(self._queues(HYPOTHETICAL_TOPIC), "layout"))
        if self.value("group"):
            check("group", lambda: rules.checked_group(self.value("group")))
        else:
            check("cids", self._cids)
        check("params", lambda: self._params(strategy, topic or HYPOTHETICAL_TOPIC))
        if "params" in out:
            check("strategy_built", lambda: rules.build_strategy(strategy, out["params"]))
            out.pop("strategy_built", None)
        for exc in refusals:
            self.refuse(exc)
        return None if refusals or not valid else out

    def refuse(self, exc: InvalidInput) -> None:
        """Show a refusal under the field it names (params.x under x), else at the top."""
        if isinstance(exc, rules.MissingRooms):  # the form has one rooms field, name=room words
            exc.fields = {"params.broker_rooms": [exc.form_message()]}
        fields = {}
        for name, reasons in exc.fields.items():
            short = SCENARIO_FIELDS.get(name) or (
                name.split(".")[1] if name.startswith("params.") else name.split(".")[0]
            )
            fields[short if short in self.fields else name] = reasons
        exc.fields = fields
        show_on_form(self, exc)


# -- rebalance -------------------------------------------------------------------------------------------

REBALANCE_MODES = [("1", _("dry run")), ("0", _("apply"))]


class RebalanceForm(forms.Form):
    """A rebalance trigger from the group page: a dry run unless ``dry_run`` is "0"."""

    dry_run = forms.TypedChoiceField(
        label=_("Dry run"), choices=REBALANCE_MODES, coerce=lambda v: v == "1", required=False, empty_value=True
    )
    timeout_s = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=300,
        label=_("Timeout (s)"),
        widget=forms.NumberInput(attrs={"placeholder": "30"}),
    )


class RebalanceFilterForm(FilterForm):
    """Filters of the rebalance history (read with GET, every field optional)."""

    group = forms.CharField(label=_("Group"), required=False)
    topic = forms.CharField(label=_("Topic"), required=False)
    status = ChoiceFilter(
        label=_("Status"),
        choices=[("", _("any status"))]
        + [(s, _(STATUS_TEXTS[s])) for s in ("queued", "running", "planned", "converged", "not_converged", "failed")],
    )
    scope = ChoiceFilter(
        label=_("Scope"),
        choices=[("", _("any scope")), ("group", _("group")), ("topic", _("topic")), ("all", _("all"))],
    )
    dry_run = ChoiceFilter(
        label=_("Kind"), choices=[("", _("dry runs and applies")), ("false", _("applies")), ("true", _("dry runs"))]
    )
    since = forms.CharField(
        label=_("Since"),
        required=False,
        help_text=rules.TIME_HINT,
        widget=forms.TextInput(attrs={"placeholder": "2024-05-01T00:00:00Z"}),
    )
    until = forms.CharField(
        label=_("Until"), required=False, widget=forms.TextInput(attrs={"placeholder": "2024-05-02T00:00:00Z"})
    )

    def _clean_time(self, name: str) -> int | None:
        value = self.cleaned_data.get(name)
        if not value:
            return None
        try:
            return rules.parse_time_ms(value, name)
        except InvalidInput as exc:
            raise ValidationError(exc.fields[name][0]) from None

    def clean_since(self) -> int | None:
        return self._clean_time("since")

    def clean_until(self) -> int | None:
        return self._clean_time("until")

    def filters_from(self, d: dict) -> JobFilter:
        when: dict[str, Any] = {
            k: datetime.fromtimestamp(d[k] / 1000, tz=timezone.utc) if d.get(k) is not None else None
            for k in ("since", "until")
        }
        return JobFilter(
            group=d.get("group", "").strip(),
            topic=d.get("topic", "").strip(),
            status=frozenset({d["status"]}) if d.get("status") else frozenset(),
            scope=d.get("scope", ""),
            dry_run={"true": True, "false": False}.get(d.get("dry_run", "")),
            **when,
        )
