"""Console forms of subscription groups: create / edit (every setting, with its help) and delete.

Where to write is one choice: every master of a cluster, one broker, or (edit, delete) every
broker that holds the group. The settings' help and ranges come from
:mod:`consumers.subscription_groups.selectors`; the services check them again.
"""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from consumers.subscription_groups.selectors import BOOL_SETTINGS, DEFAULTS, RANGES, SETTINGS, SubscriptionGroup
from consumers.subscription_groups.services import SubscriptionGroupSpec

EVERYWHERE = "all"


def _where_choices(
    clusters: tuple[str, ...], brokers: tuple[str, ...], everywhere: str | None
) -> list[tuple[str, str]]:
    choices = [(EVERYWHERE, everywhere)] if everywhere else []
    choices += [(f"cluster:{c}", _("every master of cluster %(name)s") % {"name": c}) for c in clusters]
    choices += [(f"broker:{b}", _("broker %(name)s only") % {"name": b}) for b in brokers]
    return choices


def _target(value: str) -> dict[str, str]:
    kind, _, name = value.partition(":")
    return {kind: name} if kind in ("cluster", "broker") else {}


def _label(name: str) -> str:
    return SETTINGS[name][0]


class SubscriptionGroupForm(forms.Form):
    """Create (``group`` None) or edit a group; every setting shown with RocketMQ's name and what it does."""

    name = forms.CharField(
        label=_("Name"),
        max_length=255,
        strip=False,
        help_text=_("The consumer group's name (letters, digits, - _ % |)."),
    )
    where = forms.ChoiceField(label=_("Write to"))

    def __init__(
        self,
        *args,
        clusters: tuple[str, ...],
        brokers: tuple[str, ...],
        group: SubscriptionGroup | None = None,
        **kwargs,
    ) -> None:
        self.group = group
        if group is not None and group.brokers:  # a bound form ignores it
            kwargs["initial"] = {**group.brokers[0].settings(), "name": group.name, "where": EVERYWHERE}
        super().__init__(*args, **kwargs)
        for name, (_label_text, help_text) in SETTINGS.items():
            if name in BOOL_SETTINGS:
                self.fields[name] = forms.BooleanField(
                    required=False, label=_label(name), help_text=_(help_text), initial=self.initial.get(name, True)
                )
            else:
                low, high = RANGES[name]
                self.fields[name] = forms.IntegerField(
                    label=_label(name),
                    help_text=_(help_text),
                    min_value=low,
                    max_value=high,
                    initial=self.initial.get(name, getattr(DEFAULTS, name)),
                )
        everywhere = (
            (_("every broker that holds it (%(names)s)") % {"names": ", ".join(group.broker_names)})
            if group is not None
            else None
        )
        self.fields["where"].choices = _where_choices(clusters, brokers, everywhere)
        if group is not None:
            self.fields["name"].disabled = True
            self.fields["name"].initial = group.name

    @property
    def setting_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in SETTINGS]

    def spec(self) -> SubscriptionGroupSpec:
        data = self.cleaned_data
        name = self.group.name if self.group is not None else data["name"]
        return SubscriptionGroupSpec(
            name, settings={k: data[k] for k in SETTINGS}, replace=True, **_target(data["where"])
        )


class SubscriptionGroupDeleteForm(forms.Form):
    where = forms.ChoiceField(label=_("Delete from"))
    remove_offsets = forms.BooleanField(
        required=False,
        label=_("Also remove its committed offsets"),
        help_text=_(
            "Members that come back then start from their consume-from-where setting, not where they left off."
        ),
    )

    def __init__(self, *args, group: SubscriptionGroup, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        clusters = tuple(sorted({b.cluster for b in group.brokers}))
        everywhere = _("every broker (%(names)s)") % {"names": ", ".join(group.broker_names)}
        self.fields["where"].choices = _where_choices(clusters, group.broker_names, everywhere)

    def target(self) -> dict:
        return {**_target(self.cleaned_data["where"]), "remove_offsets": self.cleaned_data["remove_offsets"]}
