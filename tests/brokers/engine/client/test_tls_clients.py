"""Gantry's clients against clusters with TLS (remoting/tls.py), certificates from the tls_certs fixture.

- enforcing: a name server, broker-a (SYNC_MASTER) and its slave replicating over TLS (HA link and
  the brokers' own requests included); the admin client, a Producer and a PushConsumer with
  ``tls=`` work; plain clients are refused and nothing they asked for happens;
- permissive: a plain and a TLS producer both send to the same ports;
- the flags of ``python -m brokers.engine broker`` build the broker's TlsConfig.
"""

from __future__ import annotations

import time

import pytest

from brokers.engine.broker.startup import build_arg_parser, config_from_args
from brokers.engine.client import Message, Producer, PushConsumer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.send_result import SendStatus
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.brokers.engine.client.test_push_consumer import FAST, Collector, wait_until


def server_tls(certs, mode: str, client_auth: str = "none") -> TlsConfig:
    return TlsConfig(
        mode=mode, cert_file=certs.server_cert, key_file=certs.server_key, ca_file=certs.ca, client_auth=client_auth
    )


class TlsGroupCluster(EmbeddedCluster):
    """A name server and broker-a with a slave (broker-a#1), every port in the given TLS mode."""

    SLAVE = "broker-a#1"

    def __init__(self, root, broker_names=("broker-a",), **options) -> None:
        super().__init__(root, broker_names, slaves={"broker-a": 1}, **options)


@pytest.fixture(scope="module")
def enforcing_cluster(tmp_path_factory, tls_certs):
    tls = server_tls(tls_certs, "enforcing", client_auth="optional")  # brokers show their certificate to each other
    cluster = TlsGroupCluster(
        tmp_path_factory.mktemp("tls-enforcing"), ("broker-a",), namesrv_options={"tls": tls}, tls=tls
    ).start()
    master = cluster.brokers["broker-a"]
    wait_until(lambda: master.store.ha_service.connections, timeout_s=20.0, what="the slave's TLS HA connection")
    yield cluster
    cluster.stop()


def test_enforcing_cluster_serves_gantry_clients_over_tls(enforcing_cluster, tls_certs, topic_name):
    cluster = enforcing_cluster
    tls = TlsConfig.client(ca_file=tls_certs.ca)
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0, tls=tls) as admin:
        route = create_topic(admin, cluster, topic_name, queues=2)
        assert {b.broker_name for b in route.broker_datas} == {"broker-a"}
        assert set(route.broker_datas[0].broker_addrs) == {0, 1}  # master and slave registered over TLS
        got = Collector()
        consumer = PushConsumer(
            f"g_{topic_name}",
            cluster.namesrv_addr,
            client_config=FAST,
            tls=tls,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        )
        consumer.subscribe(topic_name)
        consumer.register_listener(got)
        consumer.start()
        try:
            with Producer(f"p_{topic_name}", cluster.namesrv_addr, tls=tls) as producer:
                sent = [f"m{i}" for i in range(10)]
                for body in sent:
                    result = producer.send(Message(topic_name, body.encode()))
                    assert result.status == SendStatus.SEND_OK  # SYNC_MASTER: the slave acknowledged over TLS HA
            wait_until(lambda: len(got.bodies()) >= 10, what="10 messages")
            assert sorted(got.bodies()) == sorted(sent)
        finally:
            consumer.shutdown()
        runtime = admin.get_broker_runtime_info(cluster.broker_addr(TlsGroupCluster.SLAVE))
        assert runtime["haConnectionState"] == "CONNECTED"
    master, slave = cluster.brokers["broker-a"], cluster.brokers[TlsGroupCluster.SLAVE]
    wait_until(lambda: slave.store.commitlog.max_offset == master.store.commitlog.max_offset, what="the slave's copy")


def test_enforcing_cluster_refuses_plain_clients(enforcing_cluster, tls_certs, topic_name):
    cluster = enforcing_cluster
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0) as plain_admin:
        with pytest.raises(RemotingError):
            plain_admin.create_or_update_topic_in_cluster(cluster.cluster, TopicConfig(topic_name, 2, 2))
    with BlockingMQAdminClient(
        cluster.namesrv_addr, timeout_s=5.0, tls=TlsConfig.client(ca_file=tls_certs.ca)
    ) as admin:
        assert topic_name not in admin.get_all_topic_list()  # the plain request changed nothing
        route = create_topic(admin, cluster, topic_name, queues=1)
        broker_addr = route.broker_datas[0].broker_addrs[0]
    with SimpleProducer(cluster.namesrv_addr, heartbeat_interval_s=None, timeout_s=3.0) as plain:
        with pytest.raises(RemotingError):
            plain.send(Message(topic_name, b"plain"))
    with BlockingMQAdminClient(
        cluster.namesrv_addr, timeout_s=3.0
    ) as plain_admin:  # straight to the broker and the slave
        for addr in (broker_addr, cluster.broker_addr(TlsGroupCluster.SLAVE)):
            with pytest.raises(RemotingError):
                plain_admin.get_broker_runtime_info(addr)
    assert cluster.brokers["broker-a"].store.get_max_offset_in_queue(topic_name, 0) == 0


def test_a_client_trusting_another_ca_gets_a_clear_error(enforcing_cluster, tls_certs):
    with BlockingMQAdminClient(
        enforcing_cluster.namesrv_addr, timeout_s=3.0, tls=TlsConfig.client(ca_file=tls_certs.other_ca)
    ) as admin:
        with pytest.raises(RemotingError, match="failed verification"):
            admin.get_all_topic_list()


def test_permissive_cluster_serves_plain_and_tls_producers(tmp_path, tls_certs, topic_name):
    tls = server_tls(tls_certs, "permissive")
    cluster = EmbeddedCluster(tmp_path, ("broker-a",), namesrv_options={"tls": tls}, tls=tls).start()
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0) as plain_admin:
            create_topic(plain_admin, cluster, topic_name, queues=1)
        with (
            SimpleProducer(cluster.namesrv_addr, heartbeat_interval_s=None) as plain,
            SimpleProducer(
                cluster.namesrv_addr, heartbeat_interval_s=None, tls=TlsConfig.client(ca_file=tls_certs.ca)
            ) as secure,
        ):
            assert plain.send(Message(topic_name, b"plain")).status == SendStatus.SEND_OK
            assert secure.send(Message(topic_name, b"tls")).status == SendStatus.SEND_OK
        broker = cluster.brokers["broker-a"]
        deadline = time.monotonic() + 10
        while broker.store.get_max_offset_in_queue(topic_name, 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert broker.store.get_max_offset_in_queue(topic_name, 0) == 2
    finally:
        cluster.stop()


def test_broker_flags_build_its_tls_config(tmp_path, tls_certs):
    args = build_arg_parser().parse_args(
        [
            "--name",
            "broker-a",
            "--store-dir",
            str(tmp_path),
            "--tls-mode",
            "enforcing",
            "--tls-cert",
            tls_certs.server_cert,
            "--tls-key",
            tls_certs.server_key,
            "--tls-ca",
            tls_certs.ca,
            "--tls-client-auth",
            "require",
        ]
    )
    config = config_from_args(args)
    assert config.tls.mode == "enforcing" and config.tls.client_auth == "require" and config.tls.outgoing
    assert config.ha_config().tls == config.tls  # the HA port and the slave's link follow the same settings
    assert (
        config_from_args(build_arg_parser().parse_args(["--name", "broker-a", "--store-dir", str(tmp_path)])).tls
        is None
    )
