"""Apache RocketMQ 5.x's broker with its authentication on verifies requests signed by Gantry's signer, whose
signed content holds two ext fields Apache does not know (``GantryTimestamp``, ``GantryNonce``): Apache signs over
every ext field but ``Signature``, so it accepts them, and refuses the request when either is changed.
Gantry's clients therefore sign with the two fields against any broker."""

from __future__ import annotations

import json

import pytest

from brokers.engine.acl import AclClientHook
from brokers.engine.acl.signature import GANTRY_NONCE, GANTRY_TIMESTAMP
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.acl._acl_cluster import RawConnection
from tests.fixtures.apache_servers import (
    BROKER_MAIN,
    ApacheServer,
    apache_broker_config,
    broker_port,
    start_apache_namesrv,
)

USER = ("gantry-user", "gantry-secret-1")


@pytest.fixture(scope="module")
def apache_auth_broker(interop_classpaths, tmp_path_factory):
    """Apache's 5.x name server and a broker with authentication on (ACL 2.0) and one user, USER."""
    root = tmp_path_factory.mktemp("apache-auth")
    namesrv = start_apache_namesrv(interop_classpaths["apache5"], root / "namesrv")
    config = apache_broker_config(
        broker_name="apache-auth",
        cluster="ApacheAuth",
        namesrv_addr=namesrv.addr,
        port=broker_port(),
        store=root / "broker" / "store",
        authenticationEnabled="true",
        authenticationProvider="org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider",
        authenticationMetadataProvider="org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
        authConfigPath=root / "broker" / "auth",
        initAuthenticationUser=json.dumps({"username": USER[0], "password": USER[1]}),
        innerClientAuthenticationCredentials=json.dumps({"accessKey": USER[0], "secretKey": USER[1]}),
    )
    broker = ApacheServer(
        "broker apache-auth", BROKER_MAIN, interop_classpaths["apache5"], root / "broker", "broker.conf", config
    )

    def answers() -> None:  # unsigned probes are refused now, so the probe signs (with Gantry's two fields)
        with BlockingMQAdminClient(namesrv.addr, timeout_s=3.0, access_key=USER[0], secret_key=USER[1]) as admin:
            admin.get_broker_runtime_info(broker.addr)

    try:
        broker.wait_ready(answers)
    except BaseException:
        broker.stop()
        namesrv.stop()
        raise
    yield namesrv, broker
    broker.stop()
    namesrv.stop()


def test_gantry_signed_requests_verify_on_apaches_broker(apache_auth_broker):
    namesrv, broker = apache_auth_broker
    with BlockingMQAdminClient(namesrv.addr, access_key=USER[0], secret_key=USER[1]) as admin:
        admin.create_or_update_topic(broker.addr, TopicConfig("GantrySignedOnApache", 1, 1))
        assert "GantrySignedOnApache" in admin.get_all_topic_config(broker.addr)
    with BlockingMQAdminClient(namesrv.addr, access_key=USER[0], secret_key="not-the-secret") as wrong:
        with pytest.raises(MQBrokerError) as refused:
            wrong.get_all_topic_config(broker.addr)
    assert refused.value.code == ResponseCode.NO_PERMISSION


def test_apache_signs_over_gantrys_fields_so_changing_one_is_refused(apache_auth_broker):
    _, broker = apache_auth_broker
    signed = AclClientHook(*USER).sign_request(RemotingCommand.request(RequestCode.GET_ALL_TOPIC_CONFIG))
    assert GANTRY_TIMESTAMP in signed.ext_fields and GANTRY_NONCE in signed.ext_fields
    with RawConnection(broker.addr) as conn:
        assert conn.call(signed).code == ResponseCode.SUCCESS
        for field, value in (
            (GANTRY_TIMESTAMP, str(int(signed.ext_fields[GANTRY_TIMESTAMP]) + 1)),
            (GANTRY_NONCE, "0" * 32),
        ):
            tampered = RemotingCommand.request(signed.code, {**signed.ext_fields, field: value})
            answer = conn.call(tampered)
            assert answer.code == ResponseCode.NO_PERMISSION and "signature" in answer.remark.lower(), (
                field,
                answer.remark,
            )
