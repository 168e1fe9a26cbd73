"""The per-code table: every request code classified, and what each resource code needs."""

from __future__ import annotations

import json

import pytest

from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.permission import Perm
from brokers.engine.acl.request_rules import REQUEST_RULES, Access, ResourceNeed, required_resources, rule_for
from brokers.engine.remoting.codes import RequestCode as C
from brokers.engine.remoting.command import RemotingCommand

PUB, SUB = Perm.PUB, Perm.SUB


def _request(code: int, ext: dict[str, str] | None = None, body: object = None) -> RemotingCommand:
    raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    return RemotingCommand.request(code, ext or {}, raw)


@pytest.mark.parametrize("code", list(C), ids=lambda c: c.name)
def test_every_request_code_has_a_row(code: C) -> None:
    assert code in REQUEST_RULES, f"{code.name} ({int(code)}) is not classified in request_rules.REQUEST_RULES"
    rule = REQUEST_RULES[code]
    assert rule.why
    assert (rule.access is Access.RESOURCE) == bool(rule.needs or rule.body_needs)


# The admin-only codes: RocketMQ's Permission.ADMIN_CODE and Gantry's stricter additions.
ADMIN_CODES = [
    C.UPDATE_AND_CREATE_TOPIC,
    C.UPDATE_BROKER_CONFIG,
    C.DELETE_TOPIC_IN_BROKER,
    C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    C.DELETE_SUBSCRIPTIONGROUP,
    C.UPDATE_AND_CREATE_ACL_CONFIG,
    C.DELETE_ACL_CONFIG,
    C.GET_BROKER_CLUSTER_ACL_INFO,
    C.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
    54,
    C.INVOKE_BROKER_TO_RESET_OFFSET,
    C.GANTRY_NOTIFY_CONSUMER_IDS_CHANGED,
    C.GANTRY_PROMOTE_SLAVE,
    C.GANTRY_GET_MASTERLESS_OFFSETS,
    C.GET_BROKER_CONFIG,
    C.GET_BROKER_RUNTIME_INFO,
    C.GET_ALL_CONSUMER_OFFSET,
    C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    C.VIEW_MESSAGE_BY_ID,
    C.REGISTER_BROKER,
    C.UNREGISTER_BROKER,
    C.WIPE_WRITE_PERM_OF_BROKER,
    C.DELETE_TOPIC_IN_NAMESRV,
    C.QUERY_DATA_VERSION,
    C.PUT_KV_CONFIG,
    C.DELETE_KV_CONFIG,
    C.ADD_WRITE_PERM_OF_BROKER,
    C.CLONE_GROUP_OFFSET,
    C.GET_CONSUMER_RUNNING_INFO,
    C.CONSUME_MESSAGE_DIRECTLY,
    C.GET_ALL_TOPIC_CONFIG,
]


@pytest.mark.parametrize("code", ADMIN_CODES, ids=str)
def test_admin_codes(code: int) -> None:
    assert rule_for(code).access is Access.ADMIN
    assert required_resources(_request(code)) == []


def test_signature_only_codes_are_the_open_reads() -> None:
    signature_only = {code for code, rule in REQUEST_RULES.items() if rule.access is Access.SIGNATURE}
    assert signature_only == {
        C.GET_ROUTEINFO_BY_TOPIC,
        C.GET_BROKER_CLUSTER_INFO,
        C.GET_KV_CONFIG,
        C.GET_KVLIST_BY_NAMESPACE,
        C.GET_SYSTEM_TOPIC_LIST_FROM_NS,
        C.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
        C.CHECK_CLIENT_CONFIG,
        C.GANTRY_GET_GRPC_ENDPOINT,  # where a broker's 5.x endpoint is: what every route tells every 5.x client
    }


def test_an_unknown_code_is_admin_only() -> None:
    assert rule_for(4242).access is Access.ADMIN
    assert rule_for(54).access is Access.ADMIN  # 4.6-4.8's GET_BROKER_CLUSTER_ACL_CONFIG


HEARTBEAT = {
    "clientID": "c1",
    "producerDataSet": [{"groupName": "P1"}],
    "consumerDataSet": [
        {"groupName": "G1", "subscriptionDataSet": [{"topic": "T1"}, {"topic": "%RETRY%G1"}]},
        {"groupName": "G2", "subscriptionDataSet": []},
    ],
}
LOCK = {
    "consumerGroup": "G1",
    "clientId": "c1",
    "mqSet": [{"topic": "T1", "brokerName": "b", "queueId": 0}, {"topic": "T2"}],
}

# One sample request per resource code and the (resource, perm) pairs it needs.
SAMPLES = {
    C.SEND_MESSAGE: ({"producerGroup": "P", "topic": "T"}, None, [("T", PUB)]),
    C.SEND_MESSAGE_V2: ({"a": "P", "b": "T"}, None, [("T", PUB)]),
    C.SEND_BATCH_MESSAGE: ({"a": "P", "b": "T"}, None, [("T", PUB)]),
    C.PULL_MESSAGE: ({"consumerGroup": "G", "topic": "T"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
    C.LITE_PULL_MESSAGE: ({"consumerGroup": "G", "topic": "T"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
    C.POP_MESSAGE: ({"consumerGroup": "G", "topic": "T"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
    C.ACK_MESSAGE: ({"consumerGroup": "G", "topic": "T"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
    C.CHANGE_MESSAGE_INVISIBLETIME: ({"consumerGroup": "G", "topic": "T"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
    C.BATCH_ACK_MESSAGE: (
        {},
        {
            "acks": [
                {"c": "G", "t": "T", "so": 0, "q": 0, "pt": 1, "it": 1, "b": "AQ=="},
                {"consumerGroup": "G2", "topic": "T2"},
            ]
        },
        [("T", SUB), ("%RETRY%G", SUB), ("T2", SUB), ("%RETRY%G2", SUB)],
    ),
    C.QUERY_MESSAGE: ({"topic": "T", "key": "k"}, None, [("T", SUB)]),
    C.QUERY_CONSUMER_OFFSET: ({"consumerGroup": "G", "topic": "T"}, None, [("%RETRY%G", SUB), ("T", SUB)]),
    C.UPDATE_CONSUMER_OFFSET: ({"consumerGroup": "G", "topic": "T"}, None, [("%RETRY%G", SUB), ("T", SUB)]),
    C.SEARCH_OFFSET_BY_TIMESTAMP: ({"topic": "T"}, None, [("T", SUB)]),
    C.GET_MAX_OFFSET: ({"topic": "T"}, None, [("T", SUB)]),
    C.GET_MIN_OFFSET: ({"topic": "T"}, None, [("T", SUB)]),
    C.GET_EARLIEST_MSG_STORETIME: ({"topic": "T"}, None, [("T", SUB)]),
    C.HEART_BEAT: ({}, HEARTBEAT, [("%RETRY%G1", SUB), ("T1", SUB), ("%RETRY%G1", SUB), ("%RETRY%G2", SUB)]),
    C.UNREGISTER_CLIENT: ({"clientID": "c", "consumerGroup": "G"}, None, [("%RETRY%G", SUB)]),
    C.CONSUMER_SEND_MSG_BACK: ({"group": "G", "originTopic": "T"}, None, [("%RETRY%G", SUB), ("T", SUB)]),
    C.GET_CONSUMER_LIST_BY_GROUP: ({"consumerGroup": "G"}, None, [("%RETRY%G", SUB)]),
    C.LOCK_BATCH_MQ: ({}, LOCK, [("%RETRY%G1", SUB), ("T1", SUB), ("T2", SUB)]),
    C.UNLOCK_BATCH_MQ: ({}, LOCK, [("%RETRY%G1", SUB), ("T1", SUB), ("T2", SUB)]),
    C.GET_TOPIC_STATS_INFO: ({"topic": "T"}, None, [("T", SUB)]),
    C.GET_TOPIC_CONFIG: ({"topic": "T"}, None, [("T", SUB)]),
    C.GET_SUBSCRIPTIONGROUP_CONFIG: ({"group": "G"}, None, [("%RETRY%G", SUB)]),
    C.GET_CONSUMER_CONNECTION_LIST: ({"consumerGroup": "G"}, None, [("%RETRY%G", SUB)]),
    C.GET_CONSUME_STATS: ({"consumerGroup": "G", "topic": "T"}, None, [("%RETRY%G", SUB), ("T", SUB)]),
    C.QUERY_CONSUME_TIME_SPAN: ({"topic": "T", "group": "G"}, None, [("T", SUB), ("%RETRY%G", SUB)]),
}


def test_every_resource_code_has_a_sample() -> None:
    resource_codes = {code for code, rule in REQUEST_RULES.items() if rule.access is Access.RESOURCE}
    assert resource_codes == set(SAMPLES)


@pytest.mark.parametrize("code", list(SAMPLES), ids=lambda c: c.name)
def test_required_resources_per_code(code: C) -> None:
    ext, body, expected = SAMPLES[code]
    assert required_resources(_request(code, ext, body)) == [ResourceNeed(r, p) for r, p in expected]


@pytest.mark.parametrize(
    "ext, expected",
    [
        ({"producerGroup": "P", "topic": "%RETRY%G"}, [("%RETRY%G", SUB)]),  # a retry send: SUB on that group
        ({"a": "P", "b": "%DLQ%G"}, [("%DLQ%G", PUB)]),
        ({"a": "P", "b": "RMQ_SYS_TRACE_TOPIC"}, []),  # traces: signature only, as in RocketMQ
        ({"topic": "Allowed", "b": "Secret"}, [("Allowed", PUB), ("Secret", PUB)]),  # both names are checked
    ],
)
def test_send_topics(ext: dict[str, str], expected: list[tuple[str, Perm]]) -> None:
    assert required_resources(_request(C.SEND_MESSAGE_V2, ext)) == [ResourceNeed(r, p) for r, p in expected]


@pytest.mark.parametrize(
    "code, ext, body, remark",
    [
        (C.SEND_MESSAGE, {"producerGroup": "P"}, None, "names no topic"),
        (C.PULL_MESSAGE, {"topic": "T"}, None, "lacks the field consumerGroup"),
        (C.UPDATE_CONSUMER_OFFSET, {"consumerGroup": "G", "topic": ""}, None, "lacks the field topic"),
        (C.HEART_BEAT, {}, b"{not json", "heartbeat body is not JSON"),
        (C.HEART_BEAT, {}, {"consumerDataSet": [{"subscriptionDataSet": []}]}, "has no groupName"),
        (C.HEART_BEAT, {}, {"consumerDataSet": [{"groupName": "G", "subscriptionDataSet": [{}]}]}, "has no topic"),
        (C.LOCK_BATCH_MQ, {}, {"clientId": "c"}, "names no consumerGroup"),
        (C.LOCK_BATCH_MQ, {}, {"consumerGroup": "G", "mqSet": [{"queueId": 1}]}, "has no topic"),
        (C.LOCK_BATCH_MQ, {}, b"", "lock body is not JSON"),
        (C.HEART_BEAT, {}, [1, 2], "not a JSON object"),
        (C.HEART_BEAT, {}, {"consumerDataSet": 7}, "consumerDataSet in the body is not a list"),
        (
            C.HEART_BEAT,
            {},
            {"consumerDataSet": [{"groupName": "G", "subscriptionDataSet": "T"}]},
            "subscriptionDataSet",
        ),
        (C.HEART_BEAT, {}, b"[" * 100_000 + b"]" * 100_000, "heartbeat body is not JSON"),
        (C.LOCK_BATCH_MQ, {}, {"consumerGroup": "G", "mqSet": {"topic": "T"}}, "mqSet in the body is not a list"),
        (C.HEART_BEAT, {}, b" " * (4 * 1024 * 1024 + 1), "over the 4194304 bytes whose permissions are checked"),
    ],
)
def test_unreadable_requests_are_refused(code: C, ext: dict[str, str], body: object, remark: str) -> None:
    with pytest.raises(AclRefused) as caught:
        required_resources(_request(code, ext, body))
    assert remark in caught.value.remark


def test_optional_fields_are_skipped_when_absent() -> None:
    assert required_resources(_request(C.UNREGISTER_CLIENT, {"clientID": "c", "producerGroup": "P"})) == []
    assert required_resources(_request(C.GET_CONSUME_STATS, {"consumerGroup": "G"})) == [ResourceNeed("%RETRY%G", SUB)]
    assert required_resources(_request(C.CONSUMER_SEND_MSG_BACK, {"group": "G"})) == [ResourceNeed("%RETRY%G", SUB)]


def test_a_producer_only_heartbeat_needs_nothing() -> None:
    assert (
        required_resources(_request(C.HEART_BEAT, {}, {"clientID": "c", "producerDataSet": [{"groupName": "P"}]})) == []
    )
