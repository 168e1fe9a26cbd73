"""The account page's preferences (time zone, language) and the header's language switcher.

Both save through console.preferences; a refused value shows under its field and saves nothing.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST
from django.views.i18n import set_language

from console import preferences
from console.errors import ServiceError, show_on_form
from console.forms import PasswordChangeForm
from console.permissions import console_page
from console.roles import Role


class PreferenceForm(forms.Form):
    """Time zone (an IANA name; empty: UTC) and language (empty: the browser's)."""

    time_zone = forms.CharField(
        label=_("Time zone"),
        required=False,
        max_length=64,
        widget=forms.TextInput(attrs={"list": "time-zones", "placeholder": "UTC", "autocomplete": "off"}),
        help_text=_("An IANA name such as Asia/Shanghai; empty means UTC."),
    )
    language = forms.ChoiceField(
        label=_("Language"), required=False, choices=[("", _("as the browser asks"))] + list(settings.LANGUAGES)
    )


def account_context(request: HttpRequest, *, form=None, pref_form=None) -> dict:
    """What the account page (console/password_change.html) shows: both forms and the zone names."""
    if pref_form is None:
        pref = preferences.preference_of(request.user)
        pref_form = PreferenceForm(initial={"time_zone": pref.time_zone, "language": pref.language})
    return {"form": form or PasswordChangeForm(), "pref_form": pref_form, "time_zones": preferences.time_zone_names()}


@console_page(methods=("POST",), read=Role.VIEWER, write=Role.VIEWER)
def account_preferences(request: HttpRequest) -> HttpResponse:
    """Save the signed-in user's own time zone and language (any role: they change only its pages)."""
    form = PreferenceForm(request.POST)
    if form.is_valid():
        try:
            pref = preferences.save_preference(request.user, **form.cleaned_data)
        except ServiceError as exc:
            show_on_form(form, exc)
        else:
            request.session[preferences.SESSION_LANGUAGE] = pref.language
            with translation.override(pref.language or translation.get_language()):  # said in the language chosen
                messages.success(request, translation.gettext("Your preferences are saved."))
            response = redirect("password-change")
            if pref.language:  # the language cookie (LocaleMiddleware) agrees with the choice, or goes with it
                response.set_cookie(
                    settings.LANGUAGE_COOKIE_NAME,
                    pref.language,
                    max_age=settings.LANGUAGE_COOKIE_AGE,
                    path=settings.LANGUAGE_COOKIE_PATH,
                    domain=settings.LANGUAGE_COOKIE_DOMAIN,
                    secure=settings.LANGUAGE_COOKIE_SECURE,
                    httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
                    samesite=settings.LANGUAGE_COOKIE_SAMESITE,
                )
            else:
                response.delete_cookie(
                    settings.LANGUAGE_COOKIE_NAME,
                    path=settings.LANGUAGE_COOKIE_PATH,
                    domain=settings.LANGUAGE_COOKIE_DOMAIN,
                )
            return response
    return render(request, "console/password_change.html", account_context(request, pref_form=form), status=400)


@require_POST
def language_switch(request: HttpRequest) -> HttpResponse:
    """The header's switcher: this session's language (and the signed-in user's saved one), then
    Django's set_language (the language cookie, the redirect back to ``next``)."""
    code = request.POST.get("language", "")
    try:
        code = preferences.check_language(code)
    except ServiceError as exc:
        return HttpResponseBadRequest(exc.message)
    if not code:
        return HttpResponseBadRequest("language: choose one of " + ", ".join(preferences.language_codes()))
    request.session[preferences.SESSION_LANGUAGE] = code
    if request.user.is_authenticated:
        preferences.save_preference(request.user, language=code)
    return set_language(request)
