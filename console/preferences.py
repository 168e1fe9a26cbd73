"""Per-user display preferences: the time zone pages show times in and the console's language.

Storage and the REST API stay UTC (ISO 8601) and English whatever a user chooses: only console pages
change. :class:`PreferenceMiddleware` (after AuthenticationMiddleware) activates both for each page
request: the language chosen in this session (the header's switcher), else the user's saved one,
else what django.middleware.locale.LocaleMiddleware found (the language cookie or Accept-Language);
the time zone saved by the user, else UTC.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone, translation
from django.utils.translation import gettext

from console.errors import InvalidInput
from console.models import UserPreference

SESSION_LANGUAGE = "gantry_language"  # the session's choice (the header's switcher)


@dataclass(frozen=True)
class Preference:
    """What one user chose; empty strings mean "not chosen" (UTC; the browser's language)."""

    time_zone: str = ""
    language: str = ""


@lru_cache(maxsize=1)
def time_zone_names() -> tuple[str, ...]:
    """Every IANA zone name this machine's zoneinfo knows, sorted (the form offers them)."""
    return tuple(sorted(zoneinfo.available_timezones()))


def language_codes() -> tuple[str, ...]:
    return tuple(code for code, _ in settings.LANGUAGES)


def check_time_zone(name: str) -> str:
    """``name`` if it is a zoneinfo name (or empty: UTC), else InvalidInput naming ``time_zone``."""
    name = name.strip()
    if name and name not in set(time_zone_names()):
        raise InvalidInput(
            "time_zone",
            gettext("%(name)s is not a time zone name; give an IANA name such as Asia/Shanghai or Europe/Berlin.")
            % {"name": repr(name)},
        )
    return name


def check_language(code: str) -> str:
    code = code.strip().lower()
    if code and code not in language_codes():
        raise InvalidInput(
            "language",
            gettext("%(code)s is not a console language; choose one of %(codes)s.")
            % {"code": repr(code), "codes": ", ".join(language_codes())},
        )
    return code


def preference_of(user) -> Preference:
    """The saved preference of ``user`` (the defaults for anonymous users and users who chose nothing)."""
    if user is None or not user.is_authenticated:
        return Preference()
    row = UserPreference.objects.filter(user=user).values("time_zone", "language").first()
    return Preference(**row) if row else Preference()


def save_preference(user, *, time_zone: str | None = None, language: str | None = None) -> Preference:
    """Check both values, then save them (None leaves one as it is); refuses before anything is saved."""
    changes = {}
    if time_zone is not None:
        changes["time_zone"] = check_time_zone(time_zone)
    if language is not None:
        changes["language"] = check_language(language)
    row, _ = UserPreference.objects.update_or_create(user=user, defaults=changes)
    return Preference(time_zone=row.time_zone, language=row.language)


class PreferenceMiddleware:
    """Activate the user's time zone and language for console pages; /api/ stays UTC and English."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        timezone.deactivate()  # a thread serves many users: start each request from UTC
        if request.path.startswith("/api/"):
            translation.activate(settings.LANGUAGE_CODE)  # machine-facing: one stable language
            request.LANGUAGE_CODE = translation.get_language()
            return self.get_response(request)
        user = getattr(request, "user", None)
        pref = preference_of(user)
        if pref.time_zone:
            timezone.activate(zoneinfo.ZoneInfo(pref.time_zone))
        session = getattr(request, "session", None)
        language = (session.get(SESSION_LANGUAGE, "") if session is not None else "") or pref.language
        if language in language_codes():
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
