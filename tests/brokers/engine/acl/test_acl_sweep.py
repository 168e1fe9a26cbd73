"""The ACL's sweep of every request code, against a real ACL-enabled name server and broker on loopback.

Every request code, sent unsigned over a raw socket (answered and oneway) to both servers, is
answered NO_PERMISSION and changes nothing: the store and config files hash the same, and the
route, config, offset and client answers are the same bytes. A correctly signed request succeeds;
one flipped body byte, or an account the file no longer has, is refused; a SUB-only account cannot
send, a PUB-only one cannot pull, a non-admin cannot create topics.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

from brokers.engine.acl import AclClientHook
from brokers.engine.acl.request_rules import GET_BROKER_CLUSTER_ACL_CONFIG
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.register_body import encode_register_body
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.acl._acl_cluster import (
    ADMIN,
    DEMO,
    PUB_ONLY,
    SUB_ONLY,
    RawConnection,
    acl_text,
    hook,
    start_acl_cluster,
    tree_digest,
    write_acl,
)
from tests.brokers.engine.client._cluster import CLUSTER, wait_for_route

TOPIC = "AclSweepTopic"
GROUP = "AclSweepGroup"
UNKNOWN_CODE = 9999  # no server knows it: refused all the same, not REQUEST_CODE_NOT_SUPPORTED


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("acl-cluster")
    acl_file = write_acl(root / "plain_acl.yml", acl_text())
    cluster = start_acl_cluster(root / "stores", acl_file)
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig(TOPIC, 2, 2))
        wait_for_route(admin, TOPIC, 1)
    cluster.acl_file = acl_file
    yield cluster
    cluster.stop()


def signed(account, code: int, ext: dict | None = None, body: bytes = b"") -> RemotingCommand:
    return hook(account).sign_request(RemotingCommand.request(code, ext, body))


def send_v2(topic: str, body: bytes = b"hello", queue_id: int = 0) -> RemotingCommand:
    ext = {
        "a": "PG_acl",
        "b": topic,
        "c": "TBW102",
        "d": 4,
        "e": queue_id,
        "f": 0,
        "g": int(time.time() * 1000),
        "h": 0,
        "i": "",
        "j": 0,
        "k": False,
        "l": 16,
        "m": False,
    }
    return RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, ext, body)


def pull(topic: str, group: str) -> RemotingCommand:
    ext = {
        "consumerGroup": group,
        "topic": topic,
        "queueId": 0,
        "queueOffset": 0,
        "maxMsgNums": 32,
        "sysFlag": 0,
        "commitOffset": 0,
        "suspendTimeoutMillis": 0,
        "subscription": "*",
        "subVersion": 0,
    }
    return RemotingCommand.request(RequestCode.PULL_MESSAGE, ext)


# -- the sweep ------------------------------------------------------------------------------------


def harmful_request(code: int, *, oneway: bool = False) -> RemotingCommand:
    """A request of ``code`` whose fields and body would change or reveal something if it ran."""
    ext = {
        "topic": TOPIC,
        "consumerGroup": GROUP,
        "group": GROUP,
        "queueId": 0,
        "queueOffset": 0,
        "commitOffset": 99,
        "offset": 0,
        "maxMsgNums": 32,
        "sysFlag": 0,
        "subscription": "*",
        "subVersion": 0,
        "suspendTimeoutMillis": 0,
        "a": "PG_evil",
        "b": TOPIC,
        "c": "TBW102",
        "d": 4,
        "e": 0,
        "f": 0,
        "g": 0,
        "h": 0,
        "i": "",
        "j": 0,
        "k": False,
        "m": False,
        "producerGroup": "PG_evil",
        "defaultTopic": "TBW102",
        "defaultTopicQueueNums": 4,
        "bornTimestamp": 0,
        "flag": 0,
        "readQueueNums": 1,
        "writeQueueNums": 1,
        "perm": 2,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": 0,
        "order": False,
        "brokerName": "broker-a",
        "brokerAddr": "10.9.9.9:10911",
        "clusterName": CLUSTER,
        "haServerAddr": "10.9.9.9:10912",
        "brokerId": 0,
        "namespace": "ORDER_TOPIC_CONFIG",
        "key": TOPIC,
        "value": "broker-a:1",
        "timestamp": 0,
        "isForce": True,
        "clientId": "evil@1",
        "cleanOffset": True,
        "originTopic": TOPIC,
        "delayLevel": 0,
        "maxReconsumeTimes": 16,
        "srcGroup": GROUP,
        "cluster": CLUSTER,
        "destGroup": "G_evil",
        "compressed": False,
        "bodyCrc32": 0,
        "msgId": "0A0909090000000000000000",
        "key_evil": "x",
        "unitMode": False,
        "beginTimestamp": 0,
        "endTimestamp": 2**62,
    }
    bodies = {
        RequestCode.HEART_BEAT: {
            "clientID": "evil@1",
            "consumerDataSet": [
                {
                    "groupName": GROUP,
                    "consumeType": "CONSUME_PASSIVELY",
                    "messageModel": "CLUSTERING",
                    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                    "subscriptionDataSet": [
                        {"topic": TOPIC, "subString": "*", "tagsSet": [], "codeSet": [], "subVersion": 0}
                    ],
                }
            ],
            "producerDataSet": [{"groupName": "PG_evil"}],
        },
        RequestCode.LOCK_BATCH_MQ: {
            "consumerGroup": GROUP,
            "clientId": "evil@1",
            "mqSet": [{"topic": TOPIC, "brokerName": "broker-a", "queueId": 0}],
        },
        RequestCode.UNLOCK_BATCH_MQ: {
            "consumerGroup": GROUP,
            "clientId": "evil@1",
            "mqSet": [{"topic": TOPIC, "brokerName": "broker-a", "queueId": 0}],
        },
        RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: {"groupName": "G_evil", "consumeEnable": True},
    }
    if code in bodies:
        body = json.dumps(bodies[code]).encode()
    elif code == RequestCode.UPDATE_BROKER_CONFIG:
        body = b"brokerPermission=2\n"
    elif code in (RequestCode.REGISTER_BROKER, RequestCode.QUERY_DATA_VERSION):
        body = encode_register_body([TopicConfig("EvilTopic", 8, 8)], {"timestamp": 1, "counter": 9}, [])
    else:
        body = b"sweep body"
    return RemotingCommand.request(code, ext, body, oneway=oneway)


def every_code() -> list[int]:
    return sorted({int(c) for c in RequestCode} | {GET_BROKER_CLUSTER_ACL_CONFIG, UNKNOWN_CODE})


def observed_state(cluster) -> dict:
    """What the servers answer an admin about routes, configs, offsets and clients, plus every file's hash."""
    broker, namesrv = cluster.broker_addr("broker-a"), cluster.namesrv_addr
    reads = {
        namesrv: [
            (RequestCode.GET_BROKER_CLUSTER_INFO, {}),
            (RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}),
            (RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "EvilTopic"}),
            (RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {}),
            (RequestCode.GET_KVLIST_BY_NAMESPACE, {"namespace": "ORDER_TOPIC_CONFIG"}),
        ],
        broker: [
            (RequestCode.GET_ALL_TOPIC_CONFIG, {}),
            (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}),
            (RequestCode.GET_ALL_CONSUMER_OFFSET, {}),
            (RequestCode.GET_BROKER_CONFIG, {}),
            (RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS, {}),
            (RequestCode.GET_MAX_OFFSET, {"topic": TOPIC, "queueId": 0}),
            (RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": GROUP, "topic": TOPIC, "queueId": 0}),
        ],
    }
    answers = {}
    for addr, calls in reads.items():
        with RawConnection(addr) as conn:
            for code, ext in calls:
                response = conn.call(signed(ADMIN, code, ext))
                answers[(addr, code, json.dumps(ext))] = (response.code, response.remark, response.body)
    broker_ctl = cluster.brokers["broker-a"]
    answers["locks"] = repr(broker_ctl.rebalance_lock_manager.__dict__)
    answers["files"] = tree_digest(cluster.root)
    return answers


def test_every_code_unsigned_is_refused_and_changes_nothing(acl_cluster, caplog):
    caplog.set_level(logging.INFO, logger="brokers.engine.acl")
    before = observed_state(acl_cluster)
    assert (
        before[(acl_cluster.namesrv_addr, RequestCode.GET_ROUTEINFO_BY_TOPIC, json.dumps({"topic": TOPIC}))][0]
        == ResponseCode.SUCCESS
    )
    codes = every_code()
    refused: dict[str, list[int]] = {}
    for name, addr in (("namesrv", acl_cluster.namesrv_addr), ("broker", acl_cluster.broker_addr("broker-a"))):
        with RawConnection(addr) as conn:
            # a signed read first: a connection that never authenticated is read ever more slowly after
            # each refusal (channel.py), and ~400 of them would outlast its first-request deadline
            read = RequestCode.GET_BROKER_CLUSTER_INFO if name == "namesrv" else RequestCode.GET_BROKER_CONFIG
            assert conn.call(signed(ADMIN, read)).code == ResponseCode.SUCCESS
            for code in codes:
                assert conn.call(harmful_request(code, oneway=True)) is None
                response = conn.call(harmful_request(code))
                assert response.code == ResponseCode.NO_PERMISSION, (name, code, response.code, response.remark)
                assert f"request code {code} is not signed" in response.remark
                refused.setdefault(name, []).append(code)
            assert conn.call(signed(ADMIN, read)).code == ResponseCode.SUCCESS  # it still serves after ~200 refusals
    assert refused["namesrv"] == codes and refused["broker"] == codes
    time.sleep(0.3)  # let anything a oneway might have started settle before looking
    after = observed_state(acl_cluster)
    assert after.pop("files") == before.pop("files")
    assert after == before
    lines = [r.getMessage() for r in caplog.records if "refused request code" in r.getMessage()]
    assert any("from 127.0.0.1:" in line and "is not signed" in line for line in lines)
    assert len(lines) <= 2 * 20  # rate-limited: at most one burst per server in the window, not one line per refusal


# -- signed, wrongly signed, stale -----------------------------------------------------------------


def test_signed_send_succeeds_and_one_flipped_body_byte_is_refused(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    with RawConnection(broker) as conn:
        ok = conn.call(hook(DEMO).sign_request(send_v2(TOPIC, b"signed body", queue_id=1)))
        assert ok.code == ResponseCode.SUCCESS, ok.remark
        max_offset = conn.call(signed(ADMIN, RequestCode.GET_MAX_OFFSET, {"topic": TOPIC, "queueId": 1})).ext_fields[
            "offset"
        ]
        tampered = hook(DEMO).sign_request(send_v2(TOPIC, b"signed body", queue_id=1))
        tampered.body = b"signed bodY"
        refused = conn.call(tampered)
        assert refused.code == ResponseCode.NO_PERMISSION
        assert refused.remark == f"signature mismatch for accessKey {DEMO[0]}"
        wrong_secret = AclClientHook(DEMO[0], "not-the-secret").sign_request(send_v2(TOPIC, b"x", queue_id=1))
        assert conn.call(wrong_secret).code == ResponseCode.NO_PERMISSION
        unknown = AclClientHook("nobody-at-all", "whatever-1").sign_request(send_v2(TOPIC, b"x", queue_id=1))
        assert conn.call(unknown).remark == "unknown accessKey nobody-at-all"
        assert (
            conn.call(signed(ADMIN, RequestCode.GET_MAX_OFFSET, {"topic": TOPIC, "queueId": 1})).ext_fields["offset"]
            == max_offset
        )


def test_sub_only_cannot_send_pub_only_cannot_pull_non_admin_cannot_create_topics(acl_cluster):
    broker = acl_cluster.broker_addr("broker-a")
    with RawConnection(broker) as conn:
        refused = conn.call(hook(SUB_ONLY).sign_request(send_v2(TOPIC)))
        assert (refused.code, refused.remark) == (
            ResponseCode.NO_PERMISSION,
            f"no permission to PUB on topic {TOPIC} for accessKey {SUB_ONLY[0]}",
        )
        assert conn.call(hook(PUB_ONLY).sign_request(send_v2(TOPIC))).code == ResponseCode.SUCCESS
        refused = conn.call(hook(PUB_ONLY).sign_request(pull(TOPIC, GROUP)))
        assert (refused.code, refused.remark) == (
            ResponseCode.NO_PERMISSION,
            f"no permission to SUB on topic {TOPIC} for accessKey {PUB_ONLY[0]}",
        )
        pulled = conn.call(hook(SUB_ONLY).sign_request(pull(TOPIC, GROUP)))
        assert pulled.code != ResponseCode.NO_PERMISSION
    with BlockingMQAdminClient(acl_cluster.namesrv_addr, access_key=DEMO[0], secret_key=DEMO[1]) as demo_admin:
        with pytest.raises(MQBrokerError) as info:
            demo_admin.create_or_update_topic(broker, TopicConfig("DemoMadeTopic", 1, 1))
        assert info.value.code == ResponseCode.NO_PERMISSION
        assert "needs an admin account" in info.value.remark
        assert demo_admin.examine_topic_route_info(TOPIC).queue_datas  # route reads: any account's signature
    with BlockingMQAdminClient(acl_cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        assert "DemoMadeTopic" not in admin.get_all_topic_list()


def test_an_account_removed_or_changed_in_the_file_is_refused_once_it_is_reloaded(tmp_path):
    acl_file = write_acl(tmp_path / "plain_acl.yml", acl_text())
    cluster = start_acl_cluster(tmp_path / "stores", acl_file)
    try:
        with RawConnection(cluster.namesrv_addr) as conn:
            assert conn.call(signed(DEMO, RequestCode.GET_BROKER_CLUSTER_INFO)).code == ResponseCode.SUCCESS
            write_acl(acl_file, acl_text(demo_secret="a-new-secret-2"))
            deadline = time.monotonic() + 10
            while (answer := conn.call(signed(DEMO, RequestCode.GET_BROKER_CLUSTER_INFO))).code == ResponseCode.SUCCESS:
                assert time.monotonic() < deadline, "the changed ACL file was not reloaded"
                time.sleep(0.1)
            assert (answer.code, answer.remark) == (
                ResponseCode.NO_PERMISSION,
                f"signature mismatch for accessKey {DEMO[0]}",
            )
            assert (
                conn.call(signed((DEMO[0], "a-new-secret-2"), RequestCode.GET_BROKER_CLUSTER_INFO)).code
                == ResponseCode.SUCCESS
            )
            write_acl(acl_file, acl_text().replace(f"  - accessKey: {DEMO[0]}", "  - accessKey: someone-else"))
            while (
                answer := conn.call(signed((DEMO[0], "a-new-secret-2"), RequestCode.GET_BROKER_CLUSTER_INFO))
            ).code == ResponseCode.SUCCESS:
                assert time.monotonic() < deadline + 10, "the changed ACL file was not reloaded"
                time.sleep(0.1)
            assert answer.remark == f"unknown accessKey {DEMO[0]}"
    finally:
        cluster.stop()
