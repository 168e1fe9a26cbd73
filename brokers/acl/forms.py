"""The Access control page's forms: an account (the secret asked once, never shown) and the global white addresses."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from brokers.acl.services import AccountInput

PERMS = [(p, p) for p in ("DENY", "PUB", "SUB", "PUB|SUB")]


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.replace(",", "\n").splitlines() if line.strip())


class AclAccountForm(forms.Form):
    """Create or update an account. On an update an empty secret keeps the current one."""

    access_key = forms.CharField(label=_("Access key"), max_length=255)
    secret_key = forms.CharField(
        label=_("Secret key"),
        required=False,
        max_length=255,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text=_("7 characters or more; shown never again. On an update, leave empty to keep it."),
    )
    white_remote_address = forms.CharField(
        label=_("White remote address"),
        required=False,
        max_length=255,
        help_text=_("peers that pass unsigned with this key, e.g. 192.168.0.*; empty: none"),
    )
    admin = forms.BooleanField(label=_("Admin"), required=False)
    default_topic_perm = forms.ChoiceField(label=_("Default topic perm"), choices=PERMS, initial="DENY")
    default_group_perm = forms.ChoiceField(label=_("Default group perm"), choices=PERMS, initial="DENY")
    topic_perms = forms.CharField(
        label=_("Topic perms"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("one topic=PERM a line, e.g. Orders=PUB|SUB"),
    )
    group_perms = forms.CharField(
        label=_("Group perms"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("one group=PERM a line, e.g. billing=SUB"),
    )

    def account_input(self) -> AccountInput:
        data = self.cleaned_data
        return AccountInput(
            access_key=data["access_key"],
            secret_key=data["secret_key"],
            white_remote_address=data["white_remote_address"],
            admin=data["admin"],
            default_topic_perm=data["default_topic_perm"],
            default_group_perm=data["default_group_perm"],
            topic_perms=_lines(data["topic_perms"]),
            group_perms=_lines(data["group_perms"]),
        )

    @classmethod
    def for_account(cls, account) -> AclAccountForm:
        """The edit form of a listed account (never a secret)."""
        return cls(
            initial={
                "access_key": account.access_key,
                "white_remote_address": account.white_remote_address,
                "admin": account.admin,
                "default_topic_perm": account.default_topic_perm,
                "default_group_perm": account.default_group_perm,
                "topic_perms": "\n".join(account.topic_perms),
                "group_perms": "\n".join(account.group_perms),
            }
        )


class GlobalWhiteForm(forms.Form):
    addresses = forms.CharField(
        label=_("Global white addresses"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("one pattern a line (10.10.103.*, 192.168.0.{1,2}); peers listed here pass unsigned"),
    )

    def address_list(self) -> tuple[str, ...]:
        return tuple(line.strip() for line in self.cleaned_data["addresses"].splitlines() if line.strip())
