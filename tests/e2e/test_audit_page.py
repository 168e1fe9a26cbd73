"""The audit page in a browser: before/after read as key: value lines (not raw JSON), and a bad
filter in the address is refused with the field named and nothing listed."""

from __future__ import annotations

import pytest

from console.actor import Actor
from console.audit import audited
from console.roles import Role
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_audit_entries_read_as_key_values_and_bad_filters_are_refused(
    page, live_server, make_user, console_cluster, screenshot
) -> None:
    with audited(
        actor=Actor("alice", Role.OPERATOR, "console", "10.1.2.3"),
        action="topic.update",
        target_type="topic",
        target="Orders",
        before={"perm": 6, "read_queue_nums": 4},
    ) as note:
        note.after = {"perm": 4, "read_queue_nums": 4}
    make_user("viewer", username="audit-reader", password=PASSWORD)
    log_in(page, live_server.url, "audit-reader", PASSWORD)
    page.goto(f"{live_server.url}/audit/")
    before = page.locator("[data-testid=audit] tr", has_text="Orders").locator("[data-testid=audit-before]")
    assert before.locator("dt.changed").inner_text() == "perm" and before.locator("dd.changed").inner_text() == "6"
    assert "{" not in before.inner_text()  # no raw JSON
    screenshot("key-values")
    response = page.goto(f"{live_server.url}/audit/?result=bogus")
    assert response.status == 400
    error = page.locator("[data-testid=filter-error][data-field=result]")
    assert "use one of: ok, failed" in error.inner_text()
    assert page.locator("[data-testid=audit]").count() == 0  # nothing listed, not the unfiltered log
    screenshot("refused")
