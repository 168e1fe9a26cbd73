"""Passwords in a browser (there was once no way to change or reset one): a viewer changes its own
from the header's Password link (a wrong current password is refused on its field; the other
session ends, this one stays), and an admin sets another user's on the users page."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NEW = "a-fresh-long-passphrase-7"


def test_a_viewer_changes_its_own_password(browser, page, live_server, make_user, console_cluster, screenshot) -> None:
    make_user("viewer", username="vera", password=PASSWORD)
    other = browser.new_context().new_page()  # the same user signed in elsewhere
    log_in(other, live_server.url, "vera", PASSWORD)
    log_in(page, live_server.url, "vera", PASSWORD)
    page.click("[data-testid=password-link]")
    page.fill("input[name=current_password]", "not-my-password")
    page.fill("input[name=new_password]", NEW)
    page.fill("input[name=new_password2]", NEW)
    page.click("[data-testid=password-form] button[type=submit]")
    error = page.locator("[data-testid=error-current_password]")
    error.wait_for()
    assert "Current password: this is not your current password" in error.inner_text()
    screenshot("refused")

    page.fill("input[name=current_password]", PASSWORD)
    page.fill("input[name=new_password]", NEW)
    page.fill("input[name=new_password2]", NEW)
    page.click("[data-testid=password-form] button[type=submit]")
    page.locator("[data-testid=messages]", has_text="Your password is changed").wait_for()
    screenshot("changed")
    page.goto(f"{live_server.url}/audit/")
    assert "/login/" not in page.url  # this session stays
    other.goto(f"{live_server.url}/audit/")
    assert "/login/" in other.url  # the other one is signed out
    log_in(other, live_server.url, "vera", NEW)
    other.context.close()


def test_an_admin_sets_another_users_password(
    browser, page, live_server, make_user, console_cluster, screenshot
) -> None:
    make_user("admin", username="ada", password=PASSWORD)
    make_user("operator", username="otto", password=PASSWORD)
    log_in(page, live_server.url, "ada", PASSWORD)
    page.goto(f"{live_server.url}/users/")
    form = page.locator("[data-testid=reset-otto]")
    form.locator("input[name=new_password]").fill("short-1")
    form.locator("button").click()
    page.locator(
        "[data-testid=messages]", has_text="Password of otto not set: New password: This password is too short"
    ).wait_for()
    screenshot("refused")
    page.locator("[data-testid=reset-otto] input[name=new_password]").fill(NEW)
    page.locator("[data-testid=reset-otto] button").click()
    page.locator("[data-testid=messages]", has_text="Password of otto set").wait_for()
    screenshot("set")
    otto = browser.new_context().new_page()
    log_in(otto, live_server.url, "otto", NEW)
    otto.context.close()
