"""The Django side with the ACL on: the console's admin client signs with MQ ACCESS_KEY / SECRET_KEY,
mqadmin with -a/-s (or $MQ_ACCESS_KEY), run_cluster takes --acl-file, and run_embedded's accounts."""

from __future__ import annotations

import io
import os
import stat

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.acl.account_file import ADMIN_ACCESS_KEY, DEMO_ACCESS_KEY, ensure_plain_acl_file
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.acl._acl_cluster import ADMIN, acl_text, start_acl_cluster, write_acl
from tests.brokers.test_run_cluster import start, wait_for
from tests.fixtures.ports import free_ports


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("acl-console")
    cluster = start_acl_cluster(root / "stores", write_acl(root / "plain_acl.yml", acl_text()))
    yield cluster
    cluster.stop()


@pytest.fixture
def point_console(settings):
    from brokers.gateway.client import reset_admin_client

    def point(cluster, access_key: str = "", secret_key: str = "") -> None:
        settings.MQ = {
            **settings.MQ,
            "NAMESRV_ADDR": cluster.namesrv_addr,
            "ADMIN_TIMEOUT_S": 2.0,
            "ACCESS_KEY": access_key,
            "SECRET_KEY": secret_key,
        }
        reset_admin_client()

    yield point
    reset_admin_client()


@pytest.mark.django_db
def test_the_console_signs_with_mq_access_key_and_is_refused_without(acl_cluster, point_console, viewer, operator):
    point_console(acl_cluster, *ADMIN)
    assert {"name": acl_cluster.cluster, "broker_names": ["broker-a"]} in viewer.get("/api/v1/clusters").json()[
        "results"
    ]
    created = operator.post(
        "/api/v1/topics", {"name": "AclConsoleTopic", "cluster": acl_cluster.cluster}, format="json"
    )
    assert created.status_code == 201, created.content
    point_console(acl_cluster)  # no keys: every request unsigned
    refused = viewer.get("/api/v1/clusters")
    assert refused.status_code >= 400
    with BlockingMQAdminClient(acl_cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        assert "AclConsoleTopic" in admin.get_all_topic_list()


def test_mqadmin_signs_with_a_and_s_or_the_environment(acl_cluster, settings):
    out = io.StringIO()
    call_command("mqadmin", "clusterList", "-n", acl_cluster.namesrv_addr, "-a", ADMIN[0], "-s", ADMIN[1], stdout=out)
    assert acl_cluster.broker_addr("broker-a") in out.getvalue()
    settings.MQ = {
        **settings.MQ,
        "ACCESS_KEY": ADMIN[0],
        "SECRET_KEY": ADMIN[1],
    }  # what $MQ_ACCESS_KEY / $MQ_SECRET_KEY set
    out = io.StringIO()
    call_command("mqadmin", "clusterList", "-n", acl_cluster.namesrv_addr, stdout=out)
    assert acl_cluster.broker_addr("broker-a") in out.getvalue()
    settings.MQ = {**settings.MQ, "ACCESS_KEY": "", "SECRET_KEY": ""}
    with pytest.raises((CommandError, MQBrokerError)) as info:
        call_command("mqadmin", "clusterList", "-n", acl_cluster.namesrv_addr, stdout=io.StringIO())
    assert "no permission" in str(info.value).lower() or "NO_PERMISSION" in str(info.value)
    with pytest.raises(CommandError, match="both"):
        call_command("mqadmin", "clusterList", "-n", acl_cluster.namesrv_addr, "-a", ADMIN[0], stdout=io.StringIO())


def test_run_cluster_with_acl_file_checks_every_request(tmp_path):
    acl_file = write_acl(tmp_path / "plain_acl.yml", acl_text())
    ns_port, port_a = free_ports(2)
    proc, lines = start(
        "--store-dir",
        str(tmp_path / "store"),
        "--namesrv-port",
        str(ns_port),
        "--broker",
        f"broker-a:{port_a}",
        "--cluster",
        "AclRunCluster",
        "--acl-file",
        str(acl_file),
    )
    try:
        ready, seen = wait_for(lines, "ready")
        assert ready is not None, "\n".join(seen)
        namesrv = f"127.0.0.1:{ns_port}"
        with BlockingMQAdminClient(namesrv, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            assert admin.examine_broker_cluster_info().clusters == {
                "AclRunCluster": ("broker-a",)
            }  # brokers signed their registration
        with BlockingMQAdminClient(namesrv) as anonymous:
            with pytest.raises(MQBrokerError) as info:
                anonymous.examine_broker_cluster_info()
            assert info.value.code == ResponseCode.NO_PERMISSION
    finally:
        proc.terminate()
        proc.wait(30)


def test_run_cluster_refuses_a_non_loopback_host_without_an_acl(tmp_path):
    with pytest.raises(CommandError, match="--acl-file"):
        call_command("run_cluster", "--store-dir", str(tmp_path / "store"), "--host", "0.0.0.0", stdout=io.StringIO())
    with pytest.raises(CommandError, match="not both"):
        call_command(
            "run_cluster",
            "--store-dir",
            str(tmp_path / "store"),
            "--acl-file",
            "x.yml",
            "--no-acl",
            stdout=io.StringIO(),
        )
    assert not (tmp_path / "store").exists()


def test_make_runs_acl_file_is_generated_once_private_and_read_back(tmp_path, settings):
    path = tmp_path / "var" / "acl" / "plain_acl.yml"
    first = ensure_plain_acl_file(str(path))
    assert first.created and (first.admin_access_key, first.demo_access_key) == (ADMIN_ACCESS_KEY, DEMO_ACCESS_KEY)
    assert len(first.admin_secret_key) == 48 and first.admin_secret_key != first.demo_secret_key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    again = ensure_plain_acl_file(str(path))
    assert not again.created and again.admin_secret_key == first.admin_secret_key  # never overwritten

    from console.management.commands.run_embedded import Command

    settings.MQ = {
        **settings.MQ,
        "ACL_FILE": str(path),
        "ACCESS_KEY": "",
        "SECRET_KEY": "",
        "DEMO_ACCESS_KEY": "",
        "DEMO_SECRET_KEY": "",
    }
    env = Command(stdout=io.StringIO())._acl_env()
    assert env == {
        "MQ_ACCESS_KEY": ADMIN_ACCESS_KEY,
        "MQ_SECRET_KEY": first.admin_secret_key,
        "MQ_DEMO_ACCESS_KEY": DEMO_ACCESS_KEY,
        "MQ_DEMO_SECRET_KEY": first.demo_secret_key,
    }
