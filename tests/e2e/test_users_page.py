"""An admin clicks Deactivate on the users page: the console asks first; Cancel changes nothing,
confirming deactivates the user (Deactivate once asked nothing)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from console.models import AuditEntry
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _deactivate_button(page, username: str):
    row = page.locator("[data-testid=users] tr", has_text=username)
    return row.locator("button", has_text="Deactivate")


def test_deactivate_asks_first_and_cancel_changes_nothing(
    page, live_server, make_user, console_cluster, screenshot
) -> None:
    make_user("admin", username="users-boss", password=PASSWORD)
    make_user("operator", username="nina")
    log_in(page, live_server.url, "users-boss", PASSWORD)
    page.goto(f"{live_server.url}/users/")
    _deactivate_button(page, "nina").click()
    page.wait_for_selector("[data-testid=confirm-deactivate]")
    assert (
        "Deactivate nina?" in page.inner_text("h1") and page.locator("nav").count() == 1
    )  # the console's own page, nav and all
    screenshot("asked")
    nina = get_user_model().objects.get(username="nina")
    assert nina.is_active  # asking changed nothing
    page.click("[data-testid=confirm-deactivate] [data-testid=cancel]")
    page.wait_for_url(f"{live_server.url}/users/")
    nina.refresh_from_db()
    assert nina.is_active and not AuditEntry.objects.filter(action="user.update", target="nina").exists()
    assert _deactivate_button(page, "nina").count() == 1
    _deactivate_button(page, "nina").click()
    page.click("[data-testid=confirm-deactivate] [data-testid=confirm]")
    page.wait_for_url(f"{live_server.url}/users/")
    row = page.locator("[data-testid=users] tr", has_text="nina").inner_text()
    assert "inactive" in row
    screenshot("deactivated")
    nina.refresh_from_db()
    assert (
        not nina.is_active and AuditEntry.objects.filter(action="user.update", target="nina", result="ok").count() == 1
    )
