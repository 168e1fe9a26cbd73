"""How to log in to the console: the first admin account and where its generated password is.

``ensure_admin`` says it when it creates or finds the account; ``run_embedded`` says it again as
the last thing on the screen once every service is up.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model

DEFAULT_URL = "http://127.0.0.1:8000/"


def password_path():
    """The file ``ensure_admin`` saves the generated password in (0600)."""
    return settings.VAR_DIR / "admin-password"


def login_line(url: str = DEFAULT_URL) -> str | None:
    """ "Log in at <url> as <admin> (its generated password is in <file>)." or None when there is no admin yet."""
    existing = get_user_model().objects.filter(is_superuser=True).order_by("id").first()
    if existing is None:
        return None
    path = password_path()
    hint = f" (its generated password is in {path})" if path.exists() else ""
    return f"Log in at {url} as {existing.get_username()}{hint}."
