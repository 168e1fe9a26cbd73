"""``manage.py mqadmin updateSubGroup -o true`` makes a group FIFO (RocketMQ 5's consumeMessageOrderly):
the broker keeps it, and a later update without -o sets it back to the default, as RocketMQ's does."""

from __future__ import annotations

import io

from django.core.management import call_command

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_subscription_groups import get_all_subscription_group_config


def _mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def _orderly(cluster, group: str) -> bool:
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        table = admin.driver.run(get_all_subscription_group_config(cluster.broker_addr("broker-a")))
    return table[group].consume_message_orderly


def test_update_sub_group_o_sets_consume_message_orderly(module_cluster) -> None:
    addr = module_cluster.broker_addr("broker-a")
    out = _mqadmin(module_cluster, "updateSubGroup", "-b", addr, "-g", "fifo-group", "-o", "true")
    assert '"consumeMessageOrderly":true' in out.replace(" ", "")
    assert _orderly(module_cluster, "fifo-group") is True
    _mqadmin(module_cluster, "updateSubGroup", "-b", addr, "-g", "fifo-group", "-r", "3")
    assert _orderly(module_cluster, "fifo-group") is False
