"""The Clusters page's form: add or edit a name-server set (the secret key asked, never shown)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from brokers.namesrv_sets.services import MAX_POSITION, NamesrvSetInput, NamesrvSetView


class NamesrvSetForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=64, help_text=_("letters, digits, - and _; shown in the header's switcher")
    )
    namesrv_addr = forms.CharField(
        label=_("Name servers"), max_length=1000, help_text=_("host:port;host:port, as NAMESRV_ADDR")
    )
    access_key = forms.CharField(
        label=_("Access key"),
        required=False,
        max_length=255,
        help_text=_("the ACL account to sign with; empty: unsigned"),
    )
    secret_key = forms.CharField(
        label=_("Secret key"),
        required=False,
        max_length=255,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text=_("never shown again; on an edit, leave empty to keep it"),
    )
    tls = forms.BooleanField(
        label=_("TLS"), required=False, help_text=_("with the MQ_TLS_CA / MQ_TLS_CERT / MQ_TLS_KEY of this console")
    )
    position = forms.IntegerField(
        label=_("Position"), min_value=0, max_value=MAX_POSITION, initial=0, help_text=_("lower comes first")
    )

    def set_input(self) -> NamesrvSetInput:
        d = self.cleaned_data
        return NamesrvSetInput(
            name=d["name"],
            namesrv_addr=d["namesrv_addr"],
            access_key=d["access_key"],
            secret_key=d["secret_key"],
            tls=d["tls"],
            position=d["position"],
        )

    @classmethod
    def for_set(cls, view: NamesrvSetView) -> NamesrvSetForm:
        """The edit form of a listed set (never its secret)."""
        return cls(
            initial={
                "name": view.name,
                "namesrv_addr": view.namesrv_addr,
                "access_key": view.access_key,
                "tls": view.tls,
                "position": view.position,
            }
        )
