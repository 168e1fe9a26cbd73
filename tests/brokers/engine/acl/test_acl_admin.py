"""RocketMQ's ACL admin codes (50, 51, 52, 53) and Gantry's 10006 against a real ACL-enabled broker.

Each test gets a cluster of its own (the file changes): a name server and broker-a sharing one
plain_acl.yml. Changes go through the admin client's plans (brokers/engine/client/admin_acl.py)
signed with the admin account; the effects are read from the file, from the listing and from
requests signed with the changed accounts.
"""

from __future__ import annotations

import os
import stat

import pytest

from brokers.engine.acl.plain_acl_config import load_plain_acl_file
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.client.admin_acl import (
    AccessConfigChange,
    create_and_update_access_config,
    delete_access_config,
    get_acl_accounts,
    get_broker_cluster_acl_info,
    update_global_white_addrs_config,
)
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from tests.brokers.engine.acl._acl_cluster import (
    ADMIN,
    DEMO,
    RawConnection,
    acl_text,
    hook,
    start_acl_cluster,
    write_acl,
)
from tests.brokers.engine.acl.test_acl_sweep import send_v2
from tests.brokers.engine.client._cluster import EmbeddedCluster, wait_for_route

TOPIC = "AclAdminTopic"


@pytest.fixture
def acl_cluster(tmp_path):
    acl_file = write_acl(tmp_path / "plain_acl.yml", acl_text())
    cluster = start_acl_cluster(tmp_path / "stores", acl_file)
    cluster.acl_file = acl_file
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig(TOPIC, 2, 2))
        wait_for_route(admin, TOPIC, 1)
        cluster.admin = admin
        yield cluster
    cluster.stop()


def run(cluster, plan, account=ADMIN):
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=account[0], secret_key=account[1]) as admin:
        return admin.driver.run(plan)


def test_create_writes_the_file_0600_reloads_at_once_and_lists_without_secrets(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    new = ("new-producer", "new-secret-42")
    with RawConnection(broker) as conn:
        assert conn.call(hook(new).sign_request(send_v2(TOPIC, b"before"))).code == ResponseCode.NO_PERMISSION
        change = AccessConfigChange(
            new[0],
            new[1],
            white_remote_address="",
            admin=False,
            default_topic_perm="DENY",
            default_group_perm="SUB",
            topic_perms=f"{TOPIC}=PUB,Other=SUB",
            group_perms="g1=SUB",
        )
        run(acl_cluster, create_and_update_access_config(broker, change))
        sent = conn.call(hook(new).sign_request(send_v2(TOPIC, b"right away")))  # no wait: reloaded at once
        assert sent.code == ResponseCode.SUCCESS, sent.remark
    mode = stat.S_IMODE(os.stat(acl_cluster.acl_file).st_mode)
    assert mode == 0o600
    account = load_plain_acl_file(str(acl_cluster.acl_file)).account(new[0])
    assert account is not None and account.secret_key == new[1]
    listing = run(acl_cluster, get_acl_accounts(broker))
    by_key = {a.access_key: a for a in listing.accounts}
    assert by_key[new[0]].topic_perms == (f"{TOPIC}=PUB", "Other=SUB") and by_key[new[0]].group_perms == ("g1=SUB",)
    assert by_key[new[0]].default_group_perm == "SUB" and by_key[ADMIN[0]].admin
    assert listing.counter == 1 and listing.reload_error == ""
    assert new[1] not in repr(listing) and ADMIN[1] not in repr(listing)
    info = run(acl_cluster, get_broker_cluster_acl_info(broker))
    assert (info.broker_name, info.broker_addr, info.counter) == ("broker-a", broker, 1)
    assert str(acl_cluster.acl_file) in info.all_acl_file_version


def test_update_keeps_the_secret_and_place_then_delete_removes_the_account(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    order = list(load_plain_acl_file(str(acl_cluster.acl_file)).accounts)
    run(
        acl_cluster,
        create_and_update_access_config(broker, AccessConfigChange(DEMO[0], None, default_topic_perm="SUB")),
    )
    config = load_plain_acl_file(str(acl_cluster.acl_file))
    assert list(config.accounts) == order
    assert config.account(DEMO[0]).secret_key == DEMO[1] and config.account(DEMO[0]).default_topic_perm.name == "SUB"
    with RawConnection(broker) as conn:
        assert conn.call(hook(DEMO).sign_request(send_v2(TOPIC))).code == ResponseCode.NO_PERMISSION  # SUB only now
        run(acl_cluster, delete_access_config(broker, DEMO[0]))
        refused = conn.call(hook(DEMO).sign_request(send_v2(TOPIC)))
    assert refused.remark == f"unknown accessKey {DEMO[0]}"
    assert DEMO[0] not in load_plain_acl_file(str(acl_cluster.acl_file)).accounts
    with pytest.raises(MQBrokerError) as info:
        run(acl_cluster, delete_access_config(broker, DEMO[0]))
    assert info.value.code == ResponseCode.DELETE_ACL_CONFIG_FAILED and "no account" in info.value.remark


@pytest.mark.parametrize(
    "change, code, field",
    [
        (AccessConfigChange("bad-perm-user", "secret-123", topic_perms="t1=PUB,t2=PUBX"), 209, "topicPerms[1]"),
        (AccessConfigChange("bad-perm-user", "secret-123", default_group_perm="READ"), 209, "defaultGroupPerm"),
        (AccessConfigChange("short", "secret-123"), 209, "accessKey"),
        (AccessConfigChange("short-secret", "123"), 209, "secretKey"),
        (AccessConfigChange("no-secret-user"), 209, "secretKey"),
        (AccessConfigChange("bad-address", "secret-123", white_remote_address="10.0.0.300"), 209, "whiteRemoteAddress"),
        (AccessConfigChange(ADMIN[0], None, admin=False), 209, "no admin account"),
    ],
)
def test_a_bad_change_is_refused_naming_the_field_and_the_file_is_unchanged(acl_cluster, change, code, field):
    before = acl_cluster.acl_file.read_bytes()
    with pytest.raises(MQBrokerError) as info:
        run(acl_cluster, create_and_update_access_config(acl_cluster.broker_addr("broker-a"), change))
    assert info.value.code == code and field in info.value.remark and "nothing changed" in info.value.remark
    assert acl_cluster.acl_file.read_bytes() == before


def test_non_admin_is_refused_and_the_last_admin_cannot_be_deleted(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    before = acl_cluster.acl_file.read_bytes()
    for plan in (
        create_and_update_access_config(broker, AccessConfigChange("sneaky-user", "secret-123", admin=True)),
        delete_access_config(broker, ADMIN[0]),
        update_global_white_addrs_config(broker, "*"),
        get_acl_accounts(broker),
        get_broker_cluster_acl_info(broker),
    ):
        with pytest.raises(MQBrokerError) as info:
            run(acl_cluster, plan, account=DEMO)
        assert info.value.code == ResponseCode.NO_PERMISSION
    with pytest.raises(MQBrokerError) as info:
        run(acl_cluster, delete_access_config(broker, ADMIN[0]))
    assert info.value.code == ResponseCode.DELETE_ACL_CONFIG_FAILED and "no admin account" in info.value.remark
    assert acl_cluster.acl_file.read_bytes() == before


def test_global_white_addresses_are_replaced_and_a_bad_pattern_is_refused(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    run(acl_cluster, update_global_white_addrs_config(broker, "10.0.0.{1,2}, 192.168.*.*", str(acl_cluster.acl_file)))
    assert run(acl_cluster, get_acl_accounts(broker)).global_white_remote_addresses == ("10.0.0.{1,2}", "192.168.*.*")
    before = acl_cluster.acl_file.read_bytes()
    for addrs, path, field in (("10.0.0.1-300", None, "globalWhiteAddrs"), ("*", "/etc/other.yml", "aclFileFullPath")):
        with pytest.raises(MQBrokerError) as info:
            run(acl_cluster, update_global_white_addrs_config(broker, addrs, path))
        assert info.value.code == ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED and field in info.value.remark
    assert acl_cluster.acl_file.read_bytes() == before
    run(acl_cluster, update_global_white_addrs_config(broker, ""))
    assert load_plain_acl_file(str(acl_cluster.acl_file)).global_white_remote_addresses == ()


def test_a_broker_without_an_acl_file_refuses_the_acl_codes(tmp_path):
    cluster = EmbeddedCluster(tmp_path, broker_names=("broker-a",)).start()
    try:
        broker = cluster.broker_addr("broker-a")
        with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
            for plan in (
                get_acl_accounts(broker),
                get_broker_cluster_acl_info(broker),
                create_and_update_access_config(broker, AccessConfigChange("someone-new", "secret-123")),
            ):
                with pytest.raises(MQBrokerError) as info:
                    admin.driver.run(plan)
                assert info.value.code == ResponseCode.NO_PERMISSION and "without an ACL file" in info.value.remark
    finally:
        cluster.stop()
    assert RequestCode.GANTRY_GET_ACL_ACCOUNTS == 10006
