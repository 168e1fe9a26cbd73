"""Console forms: login (with the failed-login lockout), users, API tokens, audit filters."""

from __future__ import annotations

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from console import lockout
from console.query_filters import ChoiceFilter, DateFilter, FilterForm
from console.roles import Role


ROLE_LABELS = {
    Role.VIEWER: _("viewer: read"),
    Role.OPERATOR: _("operator: topics, groups, offsets, rebalance"),
    Role.ADMIN: _("admin: users and API tokens"),
}


def role_choices() -> list[tuple[str, str]]:
    """Role.choices with labels in the page's language (the model and the API keep Role's English ones)."""
    return [(value, ROLE_LABELS.get(value, label)) for value, label in Role.choices]


class LoginForm(AuthenticationForm):
    """Django's login form; django-axes (console.lockout) refuses while a lock is in force and counts failures."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("Your username and password did not match. Please try again."),
    }

    locked: lockout.LoginLock | None = None

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        try:
            return super().clean()  # authenticate(): axes refuses while locked and counts failures
        except ValidationError:
            lock = lockout.lock_after_failed_login(self.request, username) if username else None
            if lock is not None:
                self.locked = lock
                raise ValidationError(lock.message, code="locked") from None
            raise


class UserCreateForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150, strip=False)
    role = forms.ChoiceField(label=_("Role"), choices=role_choices, initial=Role.VIEWER)
    password = forms.CharField(
        label=_("Password"),
        required=False,
        strip=False,
        widget=forms.PasswordInput,
        help_text=_("Leave empty to generate one (shown once)."),
    )


def _password(label: str, autocomplete: str, **kwargs) -> forms.CharField:
    return forms.CharField(
        label=label,
        strip=False,
        max_length=4096,
        widget=forms.PasswordInput(attrs={"autocomplete": autocomplete}),
        **kwargs,
    )


class PasswordChangeForm(forms.Form):
    """A user's own password: the current one, then the new one twice (console.passwords checks them)."""

    current_password = _password(_("Current password"), "current-password")
    new_password = _password(_("New password"), "new-password", help_text="")
    new_password2 = _password(_("New password again"), "new-password")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_password"].help_text = " ".join(password_validation.password_validators_help_texts())


class PasswordResetForm(forms.Form):
    """An admin sets another user's password (users page)."""

    new_password = _password(_("New password"), "new-password")


class UserChangeForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=role_choices, required=False)
    is_active = forms.TypedChoiceField(
        label=_("Is active"),
        choices=[("", "-"), ("true", _("active")), ("false", _("inactive"))],
        required=False,
        coerce=lambda v: v == "true",
        empty_value=None,
    )
    confirm = forms.BooleanField(
        label=_("Confirm"), required=False, help_text=_("deactivating asks first: the confirm page sends confirm=yes")
    )

    def needs_confirmation(self) -> bool:
        """Deactivating signs the user out of the console and stops its tokens: asked for without
        ``confirm``, the console shows a confirm page and changes nothing."""
        return self.changes().get("is_active") is False and not self.cleaned_data.get("confirm")

    def changes(self) -> dict:
        data = self.cleaned_data
        out = {}
        if data.get("role"):
            out["role"] = Role(data["role"])
        if data.get("is_active") is not None:
            out["is_active"] = data["is_active"]
        return out


class TokenCreateForm(forms.Form):
    username = forms.ChoiceField(label=_("Username"), choices=())
    name = forms.CharField(label=_("Name"), max_length=100, required=False)

    def __init__(self, *args, usernames: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].choices = [(u, u) for u in usernames]


class AuditFilterForm(FilterForm):
    actor = forms.CharField(label=_("Actor"), required=False)
    action = forms.CharField(label=_("Action"), required=False, help_text=_("prefix: topic, user.update, …"))
    target = forms.CharField(label=_("Target"), required=False)
    result = ChoiceFilter(label=_("Result"), choices=[("", _("any")), ("ok", _("ok")), ("failed", _("failed"))])
    since = DateFilter(label=_("Since"))
    until = DateFilter(label=_("Until"))

    def filters_from(self, data: dict) -> dict:
        return {
            "actor": data.get("actor", ""),
            "action": data.get("action", ""),
            "target": data.get("target", ""),
            "result": data.get("result", ""),
            "since": data.get("since"),
            "until": data.get("until"),
        }
