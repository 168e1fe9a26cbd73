"""A plain_acl.yml written by Gantry (plain_acl_writer.render_plain_acl) is read by Apache RocketMQ 5.x's broker:
with ``migrateAuthFromV1Enabled`` it loads ``$ROCKETMQ_HOME/conf/plain_acl.yml`` through snakeyaml at start and
makes a user of each account, so a request signed with an account's secret is accepted and one signed with another
secret refused. The secrets are the awkward ones (digits only, ``: ``, ``#``, ``*``, quotes, backslash, non-ASCII):
the writer's double quoting must read back as the same string in both YAML readers."""

from __future__ import annotations

import json

import pytest

from brokers.engine.acl.plain_acl_config import parse_plain_acl_text
from brokers.engine.acl.plain_acl_writer import AclDataVersion, render_plain_acl
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.remoting.codes import ResponseCode
from tests.fixtures.apache_servers import (
    BROKER_MAIN,
    ApacheServer,
    apache_broker_config,
    broker_port,
    start_apache_namesrv,
)

ADMIN = ("gantry-admin", "12345678")  # digits only: a YAML 1.1 int unless quoted
ODD = ("odd-account", 'colon: hash # star * "q" \\ ünïcödé')
ACL_TEXT = """
globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: gantry-admin
    secretKey: "12345678"
    admin: true
  - accessKey: odd-account
    secretKey: 'colon: hash # star * "q" \\ ünïcödé'
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms: [topicA=PUB|SUB, topicB=DENY]
    groupPerms: [groupA=SUB]
"""


@pytest.fixture(scope="module")
def apache_broker_with_gantry_acl_file(interop_classpaths, tmp_path_factory):
    """Apache's 5.x name server and a broker whose users come from a Gantry-written plain_acl.yml."""
    root = tmp_path_factory.mktemp("apache-v1-acl")
    config = parse_plain_acl_text(ACL_TEXT)
    assert config.account(ODD[0]).secret_key == ODD[1]
    text = render_plain_acl(config, AclDataVersion(1, 1700000000000))
    assert parse_plain_acl_text(text) == config  # Gantry's own reader first
    conf = root / "broker" / "home" / "conf"
    conf.mkdir(parents=True)
    (conf / "plain_acl.yml").write_text(text, encoding="utf-8")
    namesrv = start_apache_namesrv(interop_classpaths["apache5"], root / "namesrv")
    broker_config = apache_broker_config(
        broker_name="apache-v1-acl",
        cluster="ApacheV1Acl",
        namesrv_addr=namesrv.addr,
        port=broker_port(),
        store=root / "broker" / "store",
        authenticationEnabled="true",
        authenticationProvider="org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider",
        authenticationMetadataProvider="org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
        authorizationMetadataProvider="org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider",
        authConfigPath=root / "broker" / "auth",
        migrateAuthFromV1Enabled="true",
        innerClientAuthenticationCredentials=json.dumps({"accessKey": ADMIN[0], "secretKey": ADMIN[1]}),
    )
    broker = ApacheServer(
        "broker apache-v1-acl",
        BROKER_MAIN,
        interop_classpaths["apache5"],
        root / "broker",
        "broker.conf",
        broker_config,
    )

    def answers() -> None:  # only a migrated account can sign a request Apache accepts
        with BlockingMQAdminClient(namesrv.addr, timeout_s=3.0, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
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


@pytest.mark.parametrize("account", [ADMIN, ODD], ids=["digits-only-secret", "odd-secret"])
def test_apache_takes_each_account_of_a_gantry_written_file(apache_broker_with_gantry_acl_file, account):
    namesrv, broker = apache_broker_with_gantry_acl_file
    with BlockingMQAdminClient(namesrv.addr, access_key=account[0], secret_key=account[1]) as signed:
        assert isinstance(signed.get_all_topic_config(broker.addr), dict)
    with BlockingMQAdminClient(namesrv.addr, access_key=account[0], secret_key=account[1] + "x") as wrong:
        with pytest.raises(MQBrokerError) as refused:
            wrong.get_all_topic_config(broker.addr)
    assert refused.value.code == ResponseCode.NO_PERMISSION
