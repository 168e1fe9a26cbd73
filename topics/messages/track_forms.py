"""The resend form of the message page: the group (from the link) and the online client to send the message to."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class MessageResendForm(forms.Form):
    topic = forms.CharField(required=False, widget=forms.HiddenInput)
    group = forms.CharField(label=_("Consumer group"), max_length=255)
    client_id = forms.ChoiceField(label=_("Client"), choices=())

    def __init__(self, *args, clients: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["client_id"].choices = [(c, c) for c in clients]
