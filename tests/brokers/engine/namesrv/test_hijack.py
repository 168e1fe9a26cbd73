"""Route-hijack protection (docs/namesrv-guard.md), against real name servers and a real broker-a on loopback.

An unrelated connection (a raw socket, nothing of Gantry's clients) claiming broker-a with another
address, or sending 104/205/216/322/327 for broker-a, is refused and GET_ROUTEINFO_BY_TOPIC and
GET_BROKER_CLUSTER_INFO answer the same bytes as before; the same requests over broker-a's own
connection, or signed by an admin account with the ACL on, work; a higher epoch still replaces a
master; bad register bodies are refused whole with a remark naming the field.
"""

from __future__ import annotations

import json

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.register_body import body_crc32, encode_register_body
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.acl._acl_cluster import (
    ADMIN,
    DEMO,
    RawConnection,
    acl_text,
    hook,
    start_acl_cluster,
    write_acl,
)
from tests.brokers.engine.client._cluster import CLUSTER, EmbeddedCluster, wait_for_route

TOPIC = "HijackTopic"


def start(root, *, admin_keys: tuple[str, str] | None = None, **namesrv_options) -> EmbeddedCluster:
    if admin_keys is None:
        cluster = EmbeddedCluster(root / "stores", broker_names=("broker-a",), namesrv_options=namesrv_options).start()
    else:
        cluster = start_acl_cluster(root / "stores", write_acl(root / "plain_acl.yml", acl_text()))
    cluster.signer = hook(admin_keys) if admin_keys else None
    keys = dict(access_key=admin_keys[0], secret_key=admin_keys[1]) if admin_keys else {}
    with BlockingMQAdminClient(cluster.namesrv_addr, **keys) as admin:
        admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig(TOPIC, 4, 4))
        wait_for_route(admin, TOPIC, 1)
    return cluster


@pytest.fixture(scope="module")
def open_cluster(tmp_path_factory):
    """ACL off, default settings: peers on this machine are operators for 205/327/216/KV."""
    cluster = start(tmp_path_factory.mktemp("hijack-open"))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def strict_cluster(tmp_path_factory):
    """ACL off, ``--strict-route-writes``: only broker-a's own connection acts on broker-a."""
    cluster = start(tmp_path_factory.mktemp("hijack-strict"), loopback_route_writes=False)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def acl_cluster(tmp_path_factory):
    cluster = start(tmp_path_factory.mktemp("hijack-acl"), admin_keys=ADMIN)
    yield cluster
    cluster.stop()


def request(cluster, code: int, ext: dict | None = None, body: bytes = b"", account=None) -> RemotingCommand:
    command = RemotingCommand.request(code, ext, body)
    signer = hook(account) if account else None
    return signer.sign_request(command) if signer else command


def raw_call(cluster, code: int, ext: dict | None = None, body: bytes = b"", account=None) -> RemotingCommand:
    """One request over a new, unrelated connection."""
    with RawConnection(cluster.namesrv_addr) as conn:
        return conn.call(request(cluster, code, ext, body, account))


def own_call(cluster, code: int, ext: dict | None = None, body: bytes = b"") -> RemotingCommand:
    """One request over broker-a's own connection (the one it registers over; it signs as admin with the ACL on)."""
    client = cluster.brokers["broker-a"].outer_api.client
    return cluster.run(client.invoke(cluster.namesrv_addr, RemotingCommand.request(code, ext, body), 5.0))


def routes(cluster) -> tuple:
    """GET_ROUTEINFO_BY_TOPIC and GET_BROKER_CLUSTER_INFO, as the bytes the name server answers."""
    answers = []
    for code, ext in (
        (RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}),
        (RequestCode.GET_BROKER_CLUSTER_INFO, {}),
        (RequestCode.GET_KVLIST_BY_NAMESPACE, {"namespace": "ORDER_TOPIC_CONFIG"}),
    ):
        response = raw_call(cluster, code, ext, account=cluster.signer and ADMIN)
        answers.append((response.code, response.body))
    assert answers[0][0] == ResponseCode.SUCCESS, answers
    return tuple(answers)


def register(
    name: str,
    addr: str,
    *topics: TopicConfig,
    broker_id: int = 0,
    epoch: int = 0,
    body: bytes | None = None,
    compressed: bool = False,
) -> tuple[dict, bytes]:
    if body is None:
        body = encode_register_body(list(topics), {"counter": 1, "timestamp": 1}, compressed=compressed)
    ext = {
        "brokerName": name,
        "brokerAddr": addr,
        "clusterName": CLUSTER,
        "haServerAddr": addr,
        "brokerId": broker_id,
        "gantryEpoch": epoch,
        "compressed": compressed,
        "bodyCrc32": body_crc32(body),
    }
    return ext, body


def other_addr(cluster) -> str:
    return "127.0.0.1:" + str(int(cluster.broker_addr("broker-a").rsplit(":", 1)[1]) + 7)


# -- a second connection claiming broker-a ---------------------------------------------------------------


@pytest.mark.parametrize("which", ["open_cluster", "acl_cluster"])
def test_second_connection_claiming_broker_a_is_refused_and_routes_unchanged(which, request):
    cluster = request.getfixturevalue(which)
    before = routes(cluster)
    holder = cluster.broker_addr("broker-a")
    ext, body = register("broker-a", other_addr(cluster), TopicConfig(TOPIC, 64, 64))
    answer = raw_call(cluster, RequestCode.REGISTER_BROKER, ext, body, account=cluster.signer and ADMIN)
    assert answer.code == ResponseCode.SYSTEM_ERROR
    assert f"broker-a id 0 is held by {holder}" in answer.remark and other_addr(cluster) in answer.remark
    assert "higher gantryEpoch" in answer.remark
    assert answer.ext("gantrySlaveId") is None  # not a stale master: nobody is told to step down
    assert routes(cluster) == before
    assert all(
        r.ok for r in cluster.run(cluster.brokers["broker-a"].register_broker_all())
    )  # the holder still registers


def test_a_slave_id_held_live_is_refused_to_another_connection(open_cluster):
    cluster = open_cluster
    slave, thief = "127.0.0.1:1", "127.0.0.1:2"
    with RawConnection(cluster.namesrv_addr) as first, RawConnection(cluster.namesrv_addr) as second:
        assert (
            first.call(request(cluster, RequestCode.REGISTER_BROKER, *register("broker-a", slave, broker_id=1))).code
            == 0
        )
        before = routes(cluster)
        answer = second.call(request(cluster, RequestCode.REGISTER_BROKER, *register("broker-a", thief, broker_id=1)))
        assert answer.code == ResponseCode.SYSTEM_ERROR and f"broker-a id 1 is held by {slave}" in answer.remark
        assert routes(cluster) == before
        # the holder itself may move (its own connection), and once its connection closes the id is free
        assert (
            first.call(
                request(cluster, RequestCode.REGISTER_BROKER, *register("broker-a", "127.0.0.1:3", broker_id=1))
            ).code
            == 0
        )
    with RawConnection(cluster.namesrv_addr) as third:
        assert (
            third.call(request(cluster, RequestCode.REGISTER_BROKER, *register("broker-a", thief, broker_id=1))).code
            == 0
        )
    # third closed: its slave registration is gone again


def test_broker_addr_must_be_on_the_connecting_peers_host(open_cluster):
    before = routes(open_cluster)
    ext, body = register("broker-z", "203.0.113.9:10911", TopicConfig(TOPIC, 4, 4))
    answer = raw_call(open_cluster, RequestCode.REGISTER_BROKER, ext, body)
    assert answer.code == ResponseCode.SYSTEM_ERROR
    assert "brokerAddr 203.0.113.9:10911 is not on the connecting peer's host 127.0.0.1:" in answer.remark
    assert routes(open_cluster) == before


def test_a_higher_epoch_replaces_a_live_master_from_another_connection(open_cluster):
    cluster = open_cluster
    with RawConnection(cluster.namesrv_addr) as old, RawConnection(cluster.namesrv_addr) as new:
        assert (
            old.call(
                request(
                    cluster, RequestCode.REGISTER_BROKER, *register("broker-p", "127.0.0.1:11", TopicConfig("PT", 1, 1))
                )
            ).code
            == 0
        )
        same_epoch = new.call(
            request(
                cluster, RequestCode.REGISTER_BROKER, *register("broker-p", "127.0.0.1:12", TopicConfig("PT", 1, 1))
            )
        )
        assert same_epoch.code == ResponseCode.SYSTEM_ERROR and "held by 127.0.0.1:11" in same_epoch.remark
        promoted = new.call(
            request(
                cluster,
                RequestCode.REGISTER_BROKER,
                *register("broker-p", "127.0.0.1:12", TopicConfig("PT", 1, 1), epoch=1),
            )
        )
        assert promoted.code == 0 and promoted.ext("gantryEpoch") == "1"
        route = json.loads(raw_call(cluster, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "PT"}).body)
        assert route["brokerDatas"][0]["brokerAddrs"] == {"0": "127.0.0.1:12"}
        stale = old.call(
            request(
                cluster, RequestCode.REGISTER_BROKER, *register("broker-p", "127.0.0.1:11", TopicConfig("PT", 1, 1))
            )
        )
        assert stale.code == ResponseCode.SYSTEM_ERROR and stale.remark.startswith("stale epoch 0 < 1")


# -- 104 / 205 / 216 / 322 / 327 for broker-a ---------------------------------------------------------------


def acting_on_broker_a(cluster) -> list[tuple[int, dict, bytes]]:
    addr = cluster.broker_addr("broker-a")
    version = json.dumps({"counter": 0, "timestamp": 0}).encode()
    return [
        (
            RequestCode.UNREGISTER_BROKER,
            {"clusterName": CLUSTER, "brokerAddr": addr, "brokerName": "broker-a", "brokerId": 0},
            b"",
        ),
        (RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}, b""),
        (RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": TOPIC}, b""),
        (RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": TOPIC, "clusterName": CLUSTER}, b""),
        (
            RequestCode.QUERY_DATA_VERSION,
            {"brokerAddr": addr, "brokerName": "broker-a", "clusterName": CLUSTER, "brokerId": 0},
            version,
        ),
        (RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}, b""),
        (RequestCode.PUT_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": TOPIC, "value": "broker-a:1"}, b""),
    ]


def test_codes_for_broker_a_from_an_unrelated_connection_are_refused(strict_cluster):
    before = routes(strict_cluster)
    for code, ext, body in acting_on_broker_a(strict_cluster):
        answer = raw_call(strict_cluster, code, ext, body)
        assert answer.code == ResponseCode.SYSTEM_ERROR, (code, answer)
        assert "refused" in answer.remark and f"({code})" in answer.remark, answer.remark
        assert routes(strict_cluster) == before, code


def test_the_brokers_own_codes_are_refused_to_other_local_peers_by_default(open_cluster):
    before = routes(open_cluster)
    for code, ext, body in acting_on_broker_a(open_cluster):
        if code in (RequestCode.UNREGISTER_BROKER, RequestCode.QUERY_DATA_VERSION):
            answer = raw_call(open_cluster, code, ext, body)
            assert answer.code == ResponseCode.SYSTEM_ERROR and "registered over another connection" in answer.remark
    assert routes(open_cluster) == before
    # an operator on this machine (mqadmin, the console) may still wipe and give back write permission
    assert raw_call(open_cluster, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}).ext(
        "wipeTopicCount"
    ) not in (None, "0")
    assert raw_call(open_cluster, RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}).code == 0
    assert routes(open_cluster) == before


def test_unsigned_or_non_admin_requests_are_refused_with_the_acl_on(acl_cluster):
    before = routes(acl_cluster)
    for code, ext, body in acting_on_broker_a(acl_cluster):
        for account in (None, DEMO):
            answer = raw_call(acl_cluster, code, ext, body, account=account)
            assert answer.code == ResponseCode.NO_PERMISSION, (code, account, answer)
    assert routes(acl_cluster) == before


@pytest.mark.parametrize("which", ["strict_cluster", "acl_cluster"])
def test_the_same_codes_work_from_broker_as_own_connection(which, request):
    cluster = request.getfixturevalue(which)
    before = routes(cluster)
    addr = cluster.broker_addr("broker-a")
    answer = own_call(
        cluster,
        RequestCode.QUERY_DATA_VERSION,
        {"brokerAddr": addr, "brokerName": "broker-a", "clusterName": CLUSTER, "brokerId": 0},
    )
    assert answer.code == 0
    assert (
        int(own_call(cluster, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}).ext("wipeTopicCount"))
        >= 1
    )
    assert (
        json.loads(
            raw_call(
                cluster, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}, account=cluster.signer and ADMIN
            ).body
        )["queueDatas"][0]["perm"]
        == 4
    )
    assert (
        int(own_call(cluster, RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}).ext("addTopicCount"))
        >= 1
    )
    assert (
        own_call(
            cluster,
            RequestCode.UNREGISTER_BROKER,
            {"clusterName": CLUSTER, "brokerAddr": addr, "brokerName": "broker-a", "brokerId": 0},
        ).code
        == 0
    )
    assert (
        raw_call(cluster, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}, account=cluster.signer and ADMIN).code
        == ResponseCode.TOPIC_NOT_EXIST
    )
    assert all(r.ok for r in cluster.run(cluster.brokers["broker-a"].register_broker_all()))
    assert routes(cluster) == before


def test_an_admin_signed_request_from_another_connection_works(acl_cluster):
    before = routes(acl_cluster)
    wiped = raw_call(acl_cluster, RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}, account=ADMIN)
    assert wiped.code == 0 and int(wiped.ext("wipeTopicCount")) >= 1
    assert (
        raw_call(acl_cluster, RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}, account=ADMIN).code == 0
    )
    assert routes(acl_cluster) == before
    # a registration signed by the admin is still held to the address rule and the live holder
    ext, body = register("broker-a", other_addr(acl_cluster))
    assert (
        raw_call(acl_cluster, RequestCode.REGISTER_BROKER, ext, body, account=ADMIN).code == ResponseCode.SYSTEM_ERROR
    )
    assert routes(acl_cluster) == before


# -- register bodies ------------------------------------------------------------------------------------------


def many_topics(n: int) -> bytes:
    table = {f"t{i}": {"topicName": f"t{i}"} for i in range(n)}
    return json.dumps(
        {"topicConfigSerializeWrapper": {"dataVersion": {"counter": 1, "timestamp": 1}, "topicConfigTable": table}}
    ).encode()


def compressed_many(n: int) -> bytes:
    import struct
    import zlib

    out = bytearray()
    version = b'{"counter":1,"timestamp":1}'
    out += struct.pack(">i", len(version)) + version + struct.pack(">i", n)
    for i in range(n):
        text = f"t{i} 1 1 6 SINGLE_TAG".encode()
        out += struct.pack(">i", len(text)) + text
    return zlib.compress(bytes(out))


@pytest.mark.parametrize(
    "body, compressed, expected",
    [
        (
            encode_register_body([TopicConfig("Big", 10**9, 4)], {"counter": 1, "timestamp": 1}),
            False,
            "readQueueNums 1000000000 is not within 0..1024",
        ),
        (
            encode_register_body([TopicConfig("Big", 4, 10**9)], {"counter": 1, "timestamp": 1}, compressed=True),
            True,
            "writeQueueNums 1000000000",
        ),
        (
            encode_register_body([TopicConfig("a/b", 4, 4)], {"counter": 1, "timestamp": 1}),
            False,
            "topicName: the topic name contains '/'",
        ),
        (
            encode_register_body([TopicConfig("P", 4, 4, perm=9)], {"counter": 1, "timestamp": 1}),
            False,
            "perm 9 is not within 0..7",
        ),
        (many_topics(100_000), False, "lists 100000 topics, more than 65536"),
        (compressed_many(100_000), True, "lists 100000 topics, not within 0..65536"),
        (
            json.dumps({"topicConfigTable": {"X": {"topicName": "Y"}}}).encode(),
            False,
            "topicConfigTable['X'].topicName is 'Y'",
        ),
        (
            json.dumps({"topicConfigTable": {}, "dataVersion": {"counter": "x"}}).encode(),
            False,
            "dataVersion.counter is not an integer",
        ),
    ],
    ids=[
        "queues-1e9",
        "queues-1e9-compressed",
        "topic-a/b",
        "perm-9",
        "100k-topics",
        "100k-topics-compressed",
        "key-mismatch",
        "data-version",
    ],
)
def test_bad_register_bodies_are_refused_whole(open_cluster, body, compressed, expected):
    before = routes(open_cluster)
    ext, body = register("broker-new", "127.0.0.1:19", body=body, compressed=compressed)
    answer = raw_call(open_cluster, RequestCode.REGISTER_BROKER, ext, body)
    assert answer.code == ResponseCode.SYSTEM_ERROR and expected in answer.remark, answer.remark
    assert routes(open_cluster) == before


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("brokerName", "a/b", "brokerName 'a/b' contains '/'"),
        ("clusterName", "a b", "clusterName 'a b' contains ' '"),
        ("brokerAddr", "127.0.0.1", "is not host:port"),
        ("brokerId", -1, "brokerId -1 is not within 0..1024"),
    ],
)
def test_bad_register_headers_are_refused(open_cluster, field, value, expected):
    before = routes(open_cluster)
    ext, body = register("broker-new", "127.0.0.1:19", TopicConfig("Fine", 1, 1))
    ext[field] = value
    answer = raw_call(open_cluster, RequestCode.REGISTER_BROKER, ext, body)
    assert answer.code == ResponseCode.SYSTEM_ERROR and expected in answer.remark, answer.remark
    assert routes(open_cluster) == before
