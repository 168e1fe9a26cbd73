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
    username = forms.CharField(max_length=150, strip=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)
    password = forms.CharField(required=False, strip=False, widget=forms.PasswordInput,
                               help_text="Leave empty to generate one (shown once).")


def _password(label: str, autocomplete: str, **kwargs) -> forms.CharField:
    return forms.CharField(label=label, strip=False, max_length=4096,
                           widget=forms.PasswordInput(attrs={"autocomplete": autocomplete}), **kwargs)


class PasswordChangeForm(forms.Form):
    """A user's own password: the current one, then the new one twice (console.passwords checks them)."""

    current_password = _password("Current password", "current-password")
    new_password = _password("New password", "new-password", help_text="")
    new_password2 = _password("New password again", "new-password")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_password"].help_text = " ".join(password_validation.password_validators_help_texts())


class PasswordResetForm(forms.Form):
    """An admin sets another user's password (users page)."""

    new_password = _password("New password", "new-password")


class UserChangeForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, required=False)
    is_active = forms.TypedChoiceField(choices=[("", "-"), ("true", "active"), ("false", "inactive")], required=False,
                                       coerce=lambda v: v == "true", empty_value=None)
    confirm = forms.BooleanField(required=False, help_text="deactivating asks first: the confirm page sends confirm=yes")

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
    username = forms.ChoiceField(choices=())
    name = forms.CharField(max_length=100, required=False)

    def __init__(self, *args, usernames: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].choices = [(u, u) for u in usernames]


class AuditFilterForm(FilterForm):
    actor = forms.CharField(required=False)
    action = forms.CharField(required=False, help_text="prefix: topic, user.update, …")
    target = forms.CharField(required=False)
    result = ChoiceFilter(choices=[("", "any"), ("ok", "ok"), ("failed", "failed")])
    since = DateFilter()
    until = DateFilter()

    def filters_from(self, data: dict) -> dict:
        return {
            "actor": data.get("actor", ""), "action": data.get("action", ""), "target": data.get("target", ""),
            "result": data.get("result", ""), "since": data.get("since"), "until": data.get("until"),
        }
