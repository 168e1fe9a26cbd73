"""Replay of signed requests, against real servers on loopback: a captured Gantry-signed admin request is
refused the second time and changes nothing; stale and tampered requests are refused; RocketMQ 4.x-style
signatures (no timestamp, no nonce) still work unless the account requires replay protection; with
replay protection required of every account, Gantry's brokers (registration, slave sync) and clients
still work, since they all sign with the two fields."""

from __future__ import annotations


import pytest

from brokers.engine.acl import AclClientHook
from brokers.engine.acl.signature import GANTRY_NONCE, GANTRY_TIMESTAMP
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client import Message
from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.clock import SYSTEM_CLOCK, ManualClock
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.acl._acl_cluster import (
    ADMIN,
    DEMO,
    RawConnection,
    acl_text,
    start_acl_cluster,
    tree_digest,
    write_acl,
)
from tests.brokers.engine.client._cluster import EmbeddedCluster, wait_for_route
from tests.fixtures.waiting import wait_until

STRICT = ("strict-user", "strict-secret-1")  # like DEMO, with gantryRequireReplayProtection: true
STRICT_ACCOUNT = f"""\
  - accessKey: {STRICT[0]}
    secretKey: {STRICT[1]}
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
    gantryRequireReplayProtection: true
"""


@pytest.fixture(scope="module")
def replay_cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("acl-replay")
    cluster = start_acl_cluster(root / "stores", write_acl(root / "plain_acl.yml", acl_text() + STRICT_ACCOUNT))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def admin(replay_cluster):
    with BlockingMQAdminClient(replay_cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as client:
        yield client


class Recorder:
    """A RequestSigner around Gantry's own: keeps the exact bytes of each request it signed (the capture)."""

    def __init__(self, signer) -> None:
        self.signer = signer
        self.frames: list[tuple[int, bytes]] = []

    def sign_request(self, command: RemotingCommand) -> RemotingCommand:
        self.signer.sign_request(command)
        self.frames.append((command.code, command.encode()))
        return command


def create_topic_request(topic: str) -> RemotingCommand:
    return RemotingCommand.request(
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        {
            "topic": topic,
            "defaultTopic": "TBW102",
            "readQueueNums": 2,
            "writeQueueNums": 2,
            "perm": 6,
            "topicFilterType": "SINGLE_TAG",
            "topicSysFlag": 0,
            "order": False,
        },
    )


def send_request(topic: str, body: bytes) -> RemotingCommand:
    return RemotingCommand.request(
        RequestCode.SEND_MESSAGE_V2,
        {
            "a": "ReplayProducer",
            "b": topic,
            "c": "TBW102",
            "d": 2,
            "e": 0,
            "f": 0,
            "g": SYSTEM_CLOCK.now_ms(),
            "h": 0,
            "i": "",
            "j": 0,
            "k": False,
            "l": 16,
            "m": False,
        },
        body,
    )


def call(cluster: EmbeddedCluster, request_or_frame: RemotingCommand | bytes) -> RemotingCommand:
    """One request on a new connection to broker-a, as an attacker replaying a capture would open one."""
    frame = request_or_frame if isinstance(request_or_frame, bytes) else request_or_frame.encode()
    with RawConnection(cluster.broker_addr("broker-a")) as conn:
        return conn.call_frame(frame)


def topic_exists(admin: BlockingMQAdminClient, cluster: EmbeddedCluster, topic: str) -> bool:
    return topic in admin.get_all_topic_config(cluster.broker_addr("broker-a"))


def test_a_captured_admin_request_is_refused_the_second_time_and_changes_nothing(replay_cluster, admin):
    topic = "ReplayCapturedTopic"
    recorder = Recorder(acl_signer(*ADMIN))  # the signer every Gantry client with keys uses
    remoting = BlockingRemotingClient(signer=recorder)
    try:
        with BlockingMQAdminClient(replay_cluster.namesrv_addr, remoting=remoting) as recorded_admin:
            recorded_admin.create_or_update_topic(replay_cluster.broker_addr("broker-a"), TopicConfig(topic, 2, 2))
            wait_for_route(recorded_admin, topic, 1)
    finally:
        remoting.close()
    (captured,) = [frame for code, frame in recorder.frames if code == RequestCode.UPDATE_AND_CREATE_TOPIC]
    sent = RemotingCommand.decode_frame(captured).ext_fields
    assert sent[GANTRY_TIMESTAMP].isdigit() and len(sent[GANTRY_NONCE]) == 32

    admin.delete_topic(topic, replay_cluster.cluster)
    wait_until(lambda: not topic_exists(admin, replay_cluster, topic), what="the topic's deletion")
    files = tree_digest(replay_cluster.root)

    replayed = call(replay_cluster, captured)
    assert replayed.code == ResponseCode.NO_PERMISSION
    assert replayed.remark == f"replayed request: nonce already seen (accessKey {ADMIN[0]})"
    assert not topic_exists(admin, replay_cluster, topic)
    with pytest.raises(MQBrokerError):
        admin.examine_topic_route_info(topic)
    assert tree_digest(replay_cluster.root) == files


@pytest.mark.parametrize("offset_s", [-600, 600])
def test_a_request_signed_outside_the_window_is_refused(replay_cluster, admin, offset_s):
    topic = f"ReplayStaleTopic{'Behind' if offset_s < 0 else 'Ahead'}"
    off_clock = ManualClock(SYSTEM_CLOCK.now_ms() + offset_s * 1000)  # a signer whose clock is 10 minutes off
    stale = AclClientHook(*ADMIN, clock=off_clock).sign_request(create_topic_request(topic))
    refused = call(replay_cluster, stale)
    assert refused.code == ResponseCode.NO_PERMISSION
    assert f"request timestamp {stale.ext_fields[GANTRY_TIMESTAMP]} is outside the ±120 s window" in refused.remark
    assert not topic_exists(admin, replay_cluster, topic)


def test_tampering_with_the_timestamp_or_stripping_the_fields_breaks_the_signature(replay_cluster, admin):
    topic = "ReplayTamperedTopic"
    original = AclClientHook(*ADMIN).sign_request(create_topic_request(topic))
    signed_ms = int(original.ext_fields[GANTRY_TIMESTAMP])
    tampered = [
        {**original.ext_fields, GANTRY_TIMESTAMP: str(signed_ms + 1)},  # a new timestamp on an old request
        {**original.ext_fields, GANTRY_NONCE: "0" * 32},  # a new nonce on an old request
        {
            k: v for k, v in original.ext_fields.items() if k not in (GANTRY_TIMESTAMP, GANTRY_NONCE)
        },  # passed off as 4.x
        {k: v for k, v in original.ext_fields.items() if k != GANTRY_NONCE},
    ]
    for ext in tampered:
        request = RemotingCommand.request(original.code, ext, original.body)
        refused = call(replay_cluster, request)
        assert (refused.code, refused.remark) == (
            ResponseCode.NO_PERMISSION,
            f"signature mismatch for accessKey {ADMIN[0]}",
        )
    assert not topic_exists(admin, replay_cluster, topic)
    # a forgery never reaches the nonce cache: the genuine request still runs, once
    assert call(replay_cluster, original).code == ResponseCode.SUCCESS
    assert topic_exists(admin, replay_cluster, topic)
    assert call(replay_cluster, original).code == ResponseCode.NO_PERMISSION


def test_rocketmq_4x_signatures_still_work_unless_the_account_requires_replay_protection(replay_cluster, admin):
    topic = "ReplayApacheStyleTopic"
    assert (
        call(
            replay_cluster, AclClientHook(*ADMIN, replay_protection=False).sign_request(create_topic_request(topic))
        ).code
        == ResponseCode.SUCCESS
    )
    wait_for_route(admin, topic, 1)
    apache_style = AclClientHook(*DEMO, replay_protection=False).sign_request(send_request(topic, b"4.x"))
    assert GANTRY_NONCE not in apache_style.ext_fields
    assert call(replay_cluster, apache_style).code == ResponseCode.SUCCESS
    # what TLS is for: without a timestamp and nonce the same bytes are accepted again
    assert call(replay_cluster, apache_style).code == ResponseCode.SUCCESS

    strict_4x = AclClientHook(*STRICT, replay_protection=False).sign_request(send_request(topic, b"refused"))
    refused = call(replay_cluster, strict_4x)
    assert refused.code == ResponseCode.NO_PERMISSION
    assert f"accessKey {STRICT[0]} requires replay protection" in refused.remark
    strict = AclClientHook(*STRICT).sign_request(send_request(topic, b"accepted"))
    assert call(replay_cluster, strict).code == ResponseCode.SUCCESS
    with SimpleProducer(
        replay_cluster.namesrv_addr, "ReplayStrictProducer", access_key=STRICT[0], secret_key=STRICT[1]
    ) as producer:
        producer.send(Message(topic, b"from Gantry's client"))


def test_with_replay_protection_required_of_everyone_gantrys_brokers_and_clients_work(tmp_path):

    acl_file = str(write_acl(tmp_path / "plain_acl.yml", acl_text() + "gantryReplayProtection:\n  required: true\n"))
    cluster = EmbeddedCluster(
        tmp_path / "stores",
        broker_names=("broker-a",),
        namesrv_options={"acl_file": acl_file},
        acl_file=acl_file,
        slave_synchronize_interval_s=0.2,
    ).start()
    try:
        topic = "ReplayRequiredTopic"
        with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig(topic, 2, 2))
            wait_for_route(admin, topic, 1)  # the master registered with the name server, signing with the fields
            slave = cluster.run(  # the group's slave, started once the master has registered
                cluster.engine.start_broker("broker-a#1", broker_name="broker-a", broker_id=1, broker_role="SLAVE")
            )
            wait_until(lambda: topic in slave.topic_config_manager.topic_config_table, what="the slave's topic sync")
            wait_until(
                lambda: 1 in admin.examine_broker_cluster_info().broker_datas["broker-a"].broker_addrs,
                what="the slave's registration",
            )
        with SimpleProducer(
            cluster.namesrv_addr, "ReplayRequiredProducer", access_key=DEMO[0], secret_key=DEMO[1]
        ) as producer:
            result = producer.send(Message(topic, b"signed with a timestamp and nonce"))
        with PullClient(cluster.namesrv_addr, "ReplayRequiredGroup", access_key=DEMO[0], secret_key=DEMO[1]) as puller:
            assert [m.body for m in puller.pull(result.message_queue, result.queue_offset, 1).messages] == [
                b"signed with a timestamp and nonce"
            ]
        apache_style = AclClientHook(*DEMO, replay_protection=False).sign_request(send_request(topic, b"4.x"))
        with RawConnection(cluster.broker_addr("broker-a")) as conn:
            refused = conn.call(apache_style)
        assert (
            refused.code == ResponseCode.NO_PERMISSION
            and f"accessKey {DEMO[0]} requires replay protection" in refused.remark
        )
    finally:
        cluster.stop()
