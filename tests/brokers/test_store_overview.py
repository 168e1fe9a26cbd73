"""The overview (/) and /api/v1/brokers show each broker's store: disk used / total and its ratio,
the retention settings (RocketMQ's names), the oldest message kept, and an alert before the
warning ratio, with a clear "refusing sends" state; read from real brokers (one of them on a real
small volume filled from outside) and, for the rendering of every contract key, from runtime-info
tables with the contract's key strings."""

from __future__ import annotations

import time

import pytest
from django.template.loader import render_to_string

from brokers.gateway.cluster import runtime_infos
from brokers.gateway.overview import LIVE, BrokerOverview, BrokerRow, broker_store_alerts
from brokers.gateway.store_disk import store_disk
from tests.brokers.gateway._runtime_tables import RETENTION, table
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db

VOLUME_FULL = 0.93  # above RocketMQ's diskSpaceWarningLevelRatio (0.90) and the old 0.85 warning alike


def wait_for(predicate, what: str, timeout_s: float = 30.0):
    """Poll ``predicate`` until it returns something true (the broker checks its disk on its own schedule)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s} s")
        time.sleep(0.2)


def row_of(rt: dict[str, str], **fields) -> BrokerRow:
    return BrokerRow("C", "broker-a", 0, "10.0.0.1:10911", LIVE, disk=store_disk(rt), **fields)


# -- real brokers --------------------------------------------------------------------------------


def test_api_brokers_carry_the_store_figures_the_brokers_report(viewer, console_cluster, topic) -> None:
    send(console_cluster, topic, 8)  # round robin over its 8 queues: both brokers store some
    brokers = viewer.get("/api/v1/brokers", {"cluster": console_cluster.cluster}).json()["results"]
    raw = runtime_infos([b["addr"] for b in brokers])
    now_ms = time.time() * 1000
    for b in brokers:
        rt = raw[b["addr"]]
        assert b["disk_total_bytes"] > 0 and 0 < b["disk_used_bytes"] <= b["disk_total_bytes"]
        # the volume's ratio, read twice a moment apart while other tests write to the same disk
        assert 0 < b["disk_used_ratio"] <= 1 and b["disk_ratio"] == pytest.approx(
            float(rt["commitLogDiskRatio"]), abs=1e-3
        )
        assert b["disk_state"] in ("ok", "high", "cleaning", "cleaning forcibly", "refusing sends")
        assert b["refusing_sends"] is (rt.get("diskFull") == "true" or rt.get("storeWritable", "true") != "true")
        assert 0 < b["earliest_message_timestamp"] <= now_ms and b["earliest_message"]  # the messages just sent
        retention = b["retention"]  # what the broker reports, None where it reports nothing
        assert retention["delete_when"] == (rt.get("deleteWhen") or None)
        for key, field in (
            ("diskMaxUsedSpaceRatio", "disk_max_used_space_ratio"),
            ("diskSpaceWarningLevelRatio", "disk_space_warning_level_ratio"),
            ("diskSpaceCleanForciblyRatio", "disk_space_clean_forcibly_ratio"),
            ("fileReservedTime", "file_reserved_time_hours"),
        ):
            assert (retention[field] is None) == (key not in rt), key


def test_the_overview_page_has_the_store_table(admin_client, console_cluster) -> None:
    page = admin_client.get("/").content.decode().replace("<wbr>", "")  # long property names break between words
    assert 'data-testid="store-disk"' in page
    for header in (
        "fileReservedTime",
        "deleteWhen",
        "diskMaxUsedSpaceRatio",
        "diskSpaceCleanForciblyRatio",
        "diskSpaceWarningLevelRatio",
        "Oldest message",
        "Files cleaned",
    ):
        assert f">{header}</" in page, header  # a property name in <code>, a label as text
    for name in ("broker-a", "broker-b"):
        assert f'<tr data-broker="{name}" data-broker-id="0"' in page


def test_a_volume_filled_from_outside_raises_the_alert_and_freeing_it_clears_it(
    viewer, admin_client, mq_settings, console_disk_cluster, console_disk_volume
) -> None:
    mq_settings(console_disk_cluster.namesrv_addr)
    addr = console_disk_cluster.broker_addr("broker-disk")
    console_disk_volume.fill_to(VOLUME_FULL)

    [broker] = viewer.get("/api/v1/brokers").json()["results"]
    # diskTotalBytes exactly; a broker reporting only commitLogDirCapacity rounds to 0.01 GiB
    assert broker["disk_total_bytes"] == pytest.approx(console_disk_volume.size_bytes, rel=0.05)
    assert broker["disk_used_ratio"] >= 0.9 and broker["disk_state"] != "ok"
    alerts = viewer.get("/api/v1/alerts").json()["results"]
    assert [(a["kind"], a["target"]) for a in alerts] == [("disk_full", addr)]
    page = admin_client.get("/").content.decode()
    assert (
        'data-testid="store-banner"' in page
        and "broker-disk" in page.split('data-testid="store-banner"')[1].split("</div>")[0]
    )

    if "diskFull" in runtime_infos([addr])[addr]:  # a broker with retention refuses sends, and says so
        wait_for(
            lambda: viewer.get("/api/v1/brokers").json()["results"][0]["refusing_sends"], "the broker refusing sends"
        )
        [alert] = viewer.get("/api/v1/alerts").json()["results"]
        assert alert["level"] == "error" and "refusing sends: disk full" in alert["message"]
        assert "refusing sends: disk full" in admin_client.get("/").content.decode()

    console_disk_volume.fill_to(0)
    wait_for(lambda: viewer.get("/api/v1/alerts").json()["count"] == 0, "the alert gone once space is freed")
    [broker] = viewer.get("/api/v1/brokers").json()["results"]
    assert broker["disk_state"] == "ok" and broker["refusing_sends"] is False and broker["disk_used_ratio"] < 0.5
    assert 'data-testid="store-banner"' not in admin_client.get("/").content.decode()


# -- the contract's keys, rendered ------------------------------------------------------------------


def overview_of(*rows: BrokerRow) -> BrokerOverview:
    alerts = tuple(a for r in rows for a in broker_store_alerts(r))
    return BrokerOverview("127.0.0.1:9876", (), (), rows, alerts)


def test_every_contract_key_is_on_the_page() -> None:
    page = render_to_string(
        "brokers/_overview.html", {"overview": overview_of(row_of(table(43, lastCleanTimeStamp="1714525200000")))}
    )
    cells = page.split('data-testid="store-disk"')[1]
    for text in (
        "43.0 GiB / 100.0 GiB",
        "43.0 %",
        '<span class="ok">ok</span>',
        "2024-05-01 00:00:00",
        "72 h",
        "<code>04</code>",
        "75.0 %",
        "85.0 %",
        "90.0 %",
        "2024-05-01 01:00:00",
        '<td class="num">3</td>',
    ):
        assert text in cells, text
    assert 'data-testid="store-banner"' not in page


def test_a_broker_without_the_new_keys_shows_dashes() -> None:
    page = render_to_string("brokers/_overview.html", {"overview": overview_of(row_of({"commitLogDiskRatio": "0.2"}))})
    row = page.split('data-testid="store-disk"')[1].split("<tbody>")[1]
    assert row.count('<td class="num">—</td>') == 5  # fileReservedTime, the three ratios, the files cleaned
    assert 'data-testid="earliest-message">—' in row and row.count("<td>—</td>") == 2  # deleteWhen, last clean


def test_disk_full_is_a_banner_and_a_refusing_state() -> None:
    page = render_to_string("brokers/_overview.html", {"overview": overview_of(row_of(table(92, diskFull="true")))})
    banner = page.split('data-testid="store-banner"')[1].split("</div>")[0]
    assert 'class="alert" role="alert" data-level="error"' in banner and "Sends refused" in banner
    assert "refusing sends: disk full (92.0 % used, diskSpaceWarningLevelRatio 90.0 %)" in banner
    assert 'data-disk-state="refusing-sends"' in page and "refusing sends: disk full</span>" in page


def test_approaching_the_warning_ratio_is_a_warning_banner() -> None:
    page = render_to_string("brokers/_overview.html", {"overview": overview_of(row_of(table(80)))})
    banner = page.split('data-testid="store-banner"')[1].split("</div>")[0]
    assert 'class="warn-banner" role="alert" data-level="warning"' in banner and "Disk filling up" in banner
    assert "at or above diskMaxUsedSpaceRatio 75.0 %" in banner and 'data-disk-state="cleaning"' in page


def test_store_alerts() -> None:
    assert broker_store_alerts(row_of(table(50))) == []
    [full] = broker_store_alerts(row_of(table(95, diskFull="true")))
    assert (full.level, full.kind, full.target) == ("error", "disk_full", "10.0.0.1:10911")
    assert full.message.startswith("broker C/broker-a (10.0.0.1:10911) refusing sends: disk full (95.0 % used")
    eio = "false: fdatasync failed: EIO"
    [latch] = broker_store_alerts(row_of(table(10, storeWritable=eio, storeHealthy=eio), error=eio))  # said once
    assert (latch.level, latch.kind) == ("error", "store_unhealthy")
    assert latch.message.endswith("refusing sends: store not writable (fdatasync failed: EIO)")
    other = broker_store_alerts(row_of(table(10), error="false: recovery found a torn record"))
    assert [a.message for a in other] == [
        "broker C/broker-a (10.0.0.1:10911) store: false: recovery found a torn record"
    ]
    assert set(RETENTION) <= set(table(1))
