"""An admin goes from the overview to a broker group's page and asks for a promotion's dry run: the job
card appears in place, follows the job (a real Celery worker) until it ends, and shows the candidate's
plan with Apply — or, from a broker without promotion, says so. Nothing in the group changes."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.e2e.conftest import log_in
from tests.fixtures.cluster import GroupCluster
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FINISHED = "[data-testid=promotion-job]:not([data-status=queued]):not([data-status=running])"


def test_overview_to_group_page_to_dry_run(
    page, live_server, make_user, console_group_cluster, celery_worker, screenshot
) -> None:
    celery_worker()
    slave = console_group_cluster.broker_addr(GroupCluster.SLAVE_KEY)
    make_user("admin", username="boss", password=PASSWORD)
    log_in(page, live_server.url, "boss", PASSWORD)

    groups = page.locator("[data-testid=broker-groups]")
    assert (
        groups.locator("tr[data-group=broker-a]").count() == 2
        and groups.locator("tr[data-group=broker-b]").count() == 1
    )
    assert "SYNC_MASTER" in groups.locator("tr[data-group=broker-a][data-broker-id='0']").inner_text()
    assert "CONNECTED" in groups.locator("tr[data-group=broker-a][data-broker-id='1']").inner_text()
    screenshot("overview")
    page.click("[data-testid=broker-group-link] >> text=broker-a")
    page.wait_for_url(f"{live_server.url}/brokers/broker-a/")
    assert page.locator("[data-testid=group-members] tr[data-role=SLAVE]").count() == 1

    page.select_option("select[name=broker_id]", "1")
    page.click("[data-testid=promote-dry-run-button]")
    card = page.wait_for_selector(FINISHED, timeout=30000)
    status = card.get_attribute("data-status")
    screenshot("dry-run")
    if status == "planned":
        assert "would promote broker-a id 1" in page.locator("[data-testid=plan-summary]").inner_text()
        assert page.locator("[data-testid=plan-would-lose]").is_visible()
        if page.locator("[data-testid=plan-refused]").count():  # a real run would be refused: no Apply, and why
            assert page.locator("[data-testid=promote-apply-button]").count() == 0
            assert page.locator("[data-testid=promote-apply-withheld]").is_visible()
        else:
            assert page.locator("[data-testid=promote-apply-button]").is_visible()
    else:  # a slave without the engine's request 10004: the job says so, and offers nothing to apply
        assert status == "failed", status
        assert "does not support promotion" in page.locator("[data-testid=job-reason]").inner_text()
        assert page.locator("[data-testid=promote-apply-button]").count() == 0
    with BlockingMQAdminClient(console_group_cluster.namesrv_addr) as admin:  # a dry run changes nothing
        assert admin.examine_broker_cluster_info().broker_datas["broker-a"].broker_addrs[1] == slave
