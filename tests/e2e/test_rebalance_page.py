"""An operator rebalances a group in the browser: a dry run shows which queues would move, Apply
tells the members, and the job card follows the job by itself until it converged (a real worker)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.fixtures.console import PASSWORD
from tests.consumers._rebalance import avg, balanced_group, held, moved_between, push_consumer, wait_until
from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_dry_run_then_apply_then_converged(
    page, live_server, make_user, celery_worker, console_cluster, topic, screenshot
) -> None:
    group = "G_e2e_" + topic[2:40]
    celery_worker()
    members, queues = balanced_group(console_cluster, group, topic, 3)
    try:
        members.append(push_consumer(console_cluster, group, topic, "c4"))
        cids = [m.client_id for m in members]
        wait_until(lambda: held(members, topic)[cids[3]], what="the fourth member")
        expected = moved_between(held(members, topic), avg(queues, cids))
        make_user("operator", username="ops", password=PASSWORD)
        log_in(page, live_server.url, "ops", PASSWORD)

        page.goto(f"{live_server.url}/groups/{group}/")
        page.click("[data-testid=dry-run-button]")
        page.wait_for_selector("[data-testid=rebalance-job][data-status=planned]", timeout=30000)
        assert page.locator("[data-testid=job-moved]").inner_text() == f"{expected} queues"
        assert page.locator("[data-testid=job-queues] tr[data-moved='1']").count() == expected
        screenshot("planned")

        page.on("dialog", lambda d: d.accept())
        page.click("[data-testid=apply-button]")
        page.wait_for_selector("[data-testid=rebalance-job][data-status=converged]", timeout=45000)
        assert page.locator("[data-testid=job-moved]").inner_text() == f"{expected} queues"
        assert held(members, topic) == avg(queues, cids)
        screenshot("converged")
        page.click("[data-testid=rebalance-history-link]")  # a navigation: expect waits for the new page's rows
        expect(page.locator("[data-testid=group-moves] tbody tr")).to_have_count(expected)
    finally:
        for m in members:
            m.shutdown()
