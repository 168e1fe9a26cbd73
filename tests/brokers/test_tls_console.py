"""The Django side with TLS: ``run_cluster --tls-mode enforcing`` (a slave replicating over TLS), the
console's admin client (brokers.gateway.client) and mqadmin with the MQ TLS_* settings, plain refused."""

from __future__ import annotations

import io
import signal
import subprocess

import pytest
from django.core.management import call_command

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig
from tests.brokers.test_run_cluster import run_to_exit, start, wait_for
from tests.fixtures.ports import free_ports

CLUSTER = "TlsConsoleCluster"


@pytest.fixture(scope="module")
def tls_run_cluster(tmp_path_factory, tls_certs):
    root = tmp_path_factory.mktemp("tls-run-cluster")
    ns_port, port_a, port_s = free_ports(3)
    proc, lines = start(
        "--store-dir",
        str(root / "store"),
        "--namesrv-port",
        str(ns_port),
        "--cluster",
        CLUSTER,
        "--broker",
        f"broker-a:{port_a}",
        "--slave",
        f"broker-a:{port_s}",
        "--tls-mode",
        "enforcing",
        "--tls-cert",
        tls_certs.server_cert,
        "--tls-key",
        tls_certs.server_key,
        "--tls-ca",
        tls_certs.ca,
    )
    try:
        ready, seen = wait_for(lines, "ready", timeout_s=60)
        assert ready is not None, "\n".join(seen)  # the ready check (over TLS) saw the slave connected over TLS HA
        yield f"127.0.0.1:{ns_port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def point_console(settings):
    from brokers.gateway.client import reset_admin_client

    def point(namesrv_addr: str, **tls) -> None:
        settings.MQ = {
            **settings.MQ,
            "NAMESRV_ADDR": namesrv_addr,
            "ADMIN_TIMEOUT_S": 3.0,
            "TLS_ENABLE": False,
            "TLS_CA": "",
            "TLS_CERT": "",
            "TLS_KEY": "",
            "TLS_VERIFY": True,
            "TLS_SERVER_NAME": "",
            **tls,
        }
        reset_admin_client()

    yield point
    reset_admin_client()


@pytest.mark.django_db
def test_the_console_speaks_tls_with_mq_tls_settings_and_is_refused_without(
    tls_run_cluster, tls_certs, point_console, viewer, operator
):
    point_console(tls_run_cluster, TLS_ENABLE=True, TLS_CA=tls_certs.ca)
    clusters = viewer.get("/api/v1/clusters")
    assert clusters.status_code == 200, clusters.content
    assert {"name": CLUSTER, "broker_names": ["broker-a"]} in clusters.json()["results"]
    created = operator.post("/api/v1/topics", {"name": "TlsConsoleTopic", "cluster": CLUSTER}, format="json")
    assert created.status_code == 201, created.content

    point_console(tls_run_cluster)  # TLS off: the enforcing name server closes every connection
    assert viewer.get("/api/v1/clusters").status_code >= 400
    with BlockingMQAdminClient(tls_run_cluster, tls=TlsConfig.client(ca_file=tls_certs.ca)) as admin:
        assert "TlsConsoleTopic" in admin.get_all_topic_list()
        assert admin.examine_broker_cluster_info().broker_datas["broker-a"].broker_addrs.keys() == {0, 1}


def test_the_gateway_client_names_a_wrong_ca(tls_run_cluster, tls_certs, point_console):
    from brokers.gateway.client import get_admin_client

    point_console(tls_run_cluster, TLS_ENABLE=True, TLS_CA=tls_certs.other_ca)
    with pytest.raises(RemotingError, match="failed verification"):
        get_admin_client().get_all_topic_list()


def test_mqadmin_uses_the_mq_tls_settings(tls_run_cluster, tls_certs, settings):
    settings.MQ = {**settings.MQ, "TLS_ENABLE": True, "TLS_CA": tls_certs.ca}  # what MQ_TLS_ENABLE=1 MQ_TLS_CA=... set
    out = io.StringIO()
    call_command("mqadmin", "clusterList", "-n", tls_run_cluster, stdout=out)
    assert CLUSTER in out.getvalue() and "broker-a" in out.getvalue()


def test_run_cluster_refuses_tls_flags_without_a_certificate(tmp_path):
    done = run_to_exit("--store-dir", str(tmp_path), "--tls-mode", "enforcing")
    assert done.returncode != 0
    assert "needs a certificate and key" in done.stdout + done.stderr
