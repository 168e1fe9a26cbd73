"""An operator downloads the metadata export, uploads a document for a dry run (a bad one is refused naming
the field), sees each topic and group to create or update with the changed properties, applies it after the
confirmation, and finds them on the brokers. Screenshots go to the test artifacts directory."""

from __future__ import annotations

import json
import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_subscription_groups import get_all_subscription_group_config
from console.models import AuditEntry
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_export_dry_run_and_apply(
    page, live_server, make_user, session_cluster, mq_settings, screenshot, tmp_path
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)
    page.click("[data-testid=menu-more]")  # under "More"
    page.click("nav >> text=Metadata")

    with page.expect_download() as download:
        page.click("[data-testid=export-button]")
    exported = json.loads(open(download.value.path()).read())
    assert {"topicConfigTable", "subscriptionGroupTable", "exportTime"} <= set(exported)
    assert "TBW102" not in exported["topicConfigTable"]

    suffix = uuid.uuid4().hex[:6]
    topic, group = f"E2eMetaTopic_{suffix}", f"E2eMetaGroup_{suffix}"
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"topicConfigTable": {topic: {"readQueueNums": -1}}})
    )  # 0 is a valid count (RocketMQ serves it)
    page.set_input_files("input[name=file]", str(bad))
    page.click("[data-testid=dry-run-button]")
    assert f"topicConfigTable.{topic}.readQueueNums" in page.locator("[data-testid=import-form]").inner_text()

    good = tmp_path / "metadata.json"
    good.write_text(
        json.dumps(
            {
                "topicConfigTable": {topic: {"topicName": topic, "readQueueNums": 3, "writeQueueNums": 3, "perm": 6}},
                "subscriptionGroupTable": {group: {"groupName": group, "retryMaxTimes": 4}, "TOOLS_CONSUMER": {}},
                "exportTime": 1700000000000,
            }
        )
    )
    page.set_input_files("input[name=file]", str(good))
    page.select_option("select[name=scope]", f"cluster:{session_cluster.cluster}")
    page.click("[data-testid=dry-run-button]")
    assert "nothing written yet" in page.locator("[data-testid=plan-counts]").inner_text()
    assert page.locator(f"tr[data-object='topic:{topic}']").get_attribute("data-action") == "create"
    assert "retryMaxTimes" in page.locator(f"tr[data-object='group:{group}']").inner_text()
    assert "TOOLS_CONSUMER" in page.locator("[data-testid=plan-skipped]").inner_text()
    screenshot("dry-run")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("[data-testid=apply-button]")
    page.wait_for_selector("text=Applied to")
    assert page.locator("[data-testid=plan-counts]").inner_text() == "2 created, 0 updated, 0 unchanged."
    assert page.locator(f"tr[data-object='topic:{topic}']").get_attribute("data-action") == "create"
    screenshot("applied")

    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        for name in session_cluster.broker_names:
            addr = session_cluster.broker_addr(name)
            assert admin.get_all_topic_config(addr)[topic].read_queue_nums == 3
            assert admin.driver.run(get_all_subscription_group_config(addr))[group].retry_max_times == 4
    entry = AuditEntry.objects.get(action="metadata.import", actor="ops")
    assert entry.result == "ok" and entry.source == "console"
