"""An admin opens Access control from the nav, creates an account with the form, sees it listed
(never its secret), and the brokers' ACL file holds it."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.acl.plain_acl_config import load_plain_acl_file
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_admin_creates_an_account_on_the_access_control_page(
    page, live_server, make_user, console_acl_cluster, screenshot
) -> None:
    make_user("admin", username="acl-boss", password=PASSWORD)
    log_in(page, live_server.url, "acl-boss", PASSWORD)
    page.click("[data-testid=menu-more]")  # under "More"
    page.click("nav >> text=Access control")
    page.wait_for_url(f"{live_server.url}/acl/")
    assert page.locator("[data-testid=acl-accounts] tr[data-access-key=gantry-admin]").count() == 1
    name, secret = f"e2e-{uuid.uuid4().hex[:8]}", "e2e-secret-value-1"
    form = page.locator("[data-testid=acl-account-form]")
    form.locator("input[name=access_key]").fill(name)
    form.locator("input[name=secret_key]").fill(secret)
    form.locator("select[name=default_group_perm]").select_option("SUB")
    form.locator("textarea[name=topic_perms]").fill("Orders=PUB|SUB")
    screenshot("filled")
    form.locator("[data-testid=acl-account-submit]").click()
    page.wait_for_selector(f"[data-testid=acl-accounts] tr[data-access-key={name}]")
    row = page.locator(f"[data-testid=acl-accounts] tr[data-access-key={name}]").inner_text()
    assert "Orders=PUB|SUB" in row and "SUB" in row
    assert secret not in page.content()
    screenshot("created")
    account = load_plain_acl_file(str(console_acl_cluster.acl_file)).account(name)
    assert account is not None and account.secret_key == secret
