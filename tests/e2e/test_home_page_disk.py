"""An operator sees a broker's disk filling up on the overview: used / total, the ratio, the state
and the banner, and the banner going away by itself (the 5 s refresh) once space is freed."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_overview_shows_disk_usage_and_the_alert(
    page, live_server, django_user_model, mq_settings, console_disk_cluster, console_disk_volume, screenshot
) -> None:
    mq_settings(console_disk_cluster.namesrv_addr)
    django_user_model.objects.create_user(username="operator", password="s3cret-pass-word")
    console_disk_volume.fill_to(0.93)

    log_in(page, live_server.url, "operator", "s3cret-pass-word")
    row = page.locator('[data-testid=store-disk] tr[data-broker="broker-disk"]')
    row.wait_for()
    used = row.locator("[data-testid=disk-used]").inner_text()
    assert re.fullmatch(r"[0-9.]+ MiB / 6[0-9.]+ MiB", used), (
        used
    )  # of a 64 MiB volume (61.4 MiB from a 0.06 GiB capacity line)
    ratio = float(row.locator("[data-testid=disk-ratio]").inner_text().removesuffix(" %"))
    assert ratio >= 90.0
    assert row.locator("[data-testid=disk-state]").inner_text() != "ok"
    banner = page.locator("[data-testid=store-banner]")
    assert banner.is_visible() and "broker-disk" in banner.inner_text()
    assert banner.locator("[role=alert]").count() == 1
    assert "DiskCluster/broker-disk" in page.locator("[data-testid=alerts]").inner_text()
    screenshot("disk-full")

    console_disk_volume.fill_to(0)
    banner.wait_for(state="detached", timeout=20_000)  # the overview refreshes itself every 5 s
    assert (
        page.locator('[data-testid=store-disk] tr[data-broker="broker-disk"] [data-testid=disk-state]').inner_text()
        == "ok"
    )
    assert page.locator("[data-testid=alerts]").inner_text() == "No alerts."
    screenshot("disk-freed")
