"""``manage.py ensure_admin`` (run by ``make run``): the first admin gets a generated password and
the admin role; later runs only say how to log in."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import RequestFactory

from console.roles import Role, role_of

pytestmark = pytest.mark.django_db


def test_creates_one_admin_with_a_generated_password(settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    password = (tmp_path / "admin-password").read_text().strip()
    assert f"with password {password}" in out.getvalue() and len(password) >= 20
    assert (tmp_path / "admin-password").stat().st_mode & 0o777 == 0o600
    user = authenticate(RequestFactory().post("/login/"), username="admin", password=password)
    assert user is not None and role_of(user) == Role.ADMIN and user.gantry_role.role == "admin"

    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    assert "Log in at http://127.0.0.1:8000/ as admin" in out.getvalue()
    assert authenticate(RequestFactory().post("/login/"), username="admin", password=password) is not None  # unchanged
