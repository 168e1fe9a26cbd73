"""``manage.py mqadmin`` on a broker group: clusterList's #BID for the slave, and Gantry's promoteSlave
(refusals before any request, a broker without promotion, a dry run's plan)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.fixtures.cluster import GroupCluster


def mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def test_cluster_list_shows_each_member_with_its_bid(group_cluster) -> None:
    lines = mqadmin(group_cluster, "clusterList").splitlines()
    assert lines[0].split()[:7] == ["#Cluster", "Name", "#Broker", "Name", "#BID", "#Addr", "#Version"]
    rows = [line.split()[:4] for line in lines[1:]]
    assert rows == [
        [group_cluster.cluster, "broker-a", "0", group_cluster.broker_addr("broker-a")],
        [group_cluster.cluster, "broker-a", "1", group_cluster.broker_addr(GroupCluster.SLAVE_KEY)],
        [group_cluster.cluster, "broker-b", "0", group_cluster.broker_addr("broker-b")],
    ]
    assert lines[1].index(" 0 ") == lines[2].index(" 1 ")  # the #BID column lines up


def test_promote_slave_refuses_bad_targets_before_asking(group_cluster) -> None:
    for args, says in (
        (["-b", "broker-zz", "-i", "1"], "broker broker-zz is not known"),
        (["-b", "broker-b", "-i", "1"], "broker-b has no broker with id 1"),
    ):
        with pytest.raises(CommandError, match=says):
            mqadmin(group_cluster, "promoteSlave", *args, "--dry-run")
    with pytest.raises(CommandError, match="not a slave's"):
        mqadmin(group_cluster, "promoteSlave", "-b", "broker-a", "-i", "0")
    with pytest.raises(CommandError, match="illegal broker name: the broker name contains a space at position 4"):
        mqadmin(group_cluster, "promoteSlave", "-b", "bad name", "-i", "1")
    with pytest.raises(CommandError, match="invalid choice"):
        mqadmin(group_cluster, "promoteSlave", "-b", "broker-a", "-i", "1", "--role", "SLAVE")


def test_promote_slave_dry_run_prints_the_plan(group_cluster) -> None:
    try:
        out = mqadmin(group_cluster, "promoteSlave", "-b", "broker-a", "-i", "1", "--dry-run")
    except CommandError as exc:
        if "does not support promotion" in str(exc):  # the engine's request 10004 is built in parallel
            pytest.xfail(f"the engine does not answer GANTRY_PROMOTE_SLAVE (10004) yet: {exc}")
        raise
    lines = dict(line.split(None, 1) for line in out.splitlines() if line and not line.startswith("dry run"))
    assert lines["brokerName"] == "broker-a" and lines["fromRole"] == "SLAVE" and lines["dryRun"] == "true"
    assert "dry run: the promotion of broker-a id 1" in out and "alive" in out  # its master runs: a real run is refused


def test_consumer_progress_of_an_unknown_group_is_an_error_naming_it(session_cluster) -> None:
    with pytest.raises(
        CommandError, match=r"consumer group \[NoSuchGroup_q\]: not found the consumer group consume stats"
    ):
        mqadmin(session_cluster, "consumerProgress", "-g", "NoSuchGroup_q")
