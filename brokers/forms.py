"""The broker group page's promotion form (the API's PromoteInput is the other front door)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from brokers.gateway.promotion import PROMOTION_ROLES

MODES = (("1", _("dry run")), ("0", _("apply")))


class PromoteForm(forms.Form):
    """Promote a slave: a dry run unless ``dry_run`` is "0"; ``broker_id`` one of the group's slaves."""

    broker_id = forms.TypedChoiceField(coerce=int, label=_("Slave"), choices=())
    force = forms.BooleanField(
        required=False,
        label=_("Force"),
        help_text=_("promote even if it lacks acknowledged data or its master is alive"),
    )
    role = forms.ChoiceField(
        required=False, label=_("Role"), choices=[("", _("as the master was"))] + [(r, r) for r in PROMOTION_ROLES]
    )
    dry_run = forms.TypedChoiceField(
        label=_("Dry run"), choices=MODES, coerce=lambda v: v == "1", required=False, empty_value=True
    )

    def __init__(self, *args, slaves: tuple[tuple[int, str], ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["broker_id"].choices = [(bid, f"id {bid} ({addr})") for bid, addr in slaves]

    @classmethod
    def for_group(cls, group) -> PromoteForm:
        """The unbound form of a group's page: its slaves to choose from."""
        return cls(slaves=tuple((m.broker_id, m.addr) for m in group.slaves))
