"""The group survey plan of brokers.admin_extras, stepped by hand (a plan does no I/O): one
GET_BROKER_CONSUME_STATS per broker where the broker serves it, the bulk tables and per-topic
stats where it answers "not supported", and both bodies' fastjson forms read exactly."""
from __future__ import annotations

from brokers.admin_extras import _offset_table, _topic_max_offsets, consumer_connections_plan, group_survey_plan
from brokers.engine.client.plan import Fanout, Reply
from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand


def reply(addr: str, code: int = ResponseCode.SUCCESS, body: object = None) -> Reply:
    raw = json_compat.dumps(body).encode() if body is not None else b""
    return Reply(addr, RemotingCommand(code=code, body=raw, remark=None if code == 0 else "nope"))


def run(plan, answer):
    """Step ``plan``, answering each Fanout with ``answer(call)``; return (result, the codes asked)."""
    asked, value = [], None
    try:
        while True:
            step = plan.send(value)
            assert isinstance(step, Fanout)
            asked.append([c.code for c in step.calls])
            value = [answer(c) for c in step.calls]
    except StopIteration as stop:
        return stop.value, asked


MQ = MessageQueue("Orders", "broker-a", 0)


def test_one_request_per_broker_where_brokers_serve_broker_consume_stats() -> None:
    stats = {"brokerAddr": "a:1", "totalDiff": 7, "consumeStatsList": [
        {"G1": [{"consumeTps": 2.5, "offsetTable": {MQ: {"brokerOffset": 10, "consumerOffset": 3, "lastTimestamp": 0},
                                                      MessageQueue("Orders", "broker-a", 1): {"brokerOffset": 4, "consumerOffset": 4, "lastTimestamp": 0}}}]},
        {"Idle": []}]}
    result, asked = run(group_survey_plan(["a:1"]), lambda c: reply(c.addr, body=stats))
    assert asked == [[RequestCode.GET_BROKER_CONSUME_STATS]]
    survey = result["a:1"]
    assert survey.stats_source == "GET_BROKER_CONSUME_STATS" and survey.lag == {"G1": 7, "Idle": 0} and survey.tps == {"G1": 2.5}
    assert survey.offsets == {("Orders", "G1"): {0: 3, 1: 4}} and set(survey.configs) == {"G1", "Idle"}


def test_a_broker_without_it_is_read_from_its_tables_and_topic_stats() -> None:
    groups = {"dataVersion": {}, "subscriptionGroupTable": {"G1": {"groupName": "G1", "consumeEnable": False}, "New": {"groupName": "New"}}}
    offsets = {"offsetTable": {"Orders@G1": {0: 3, 1: 4}}}
    topic_stats = {"offsetTable": {MQ: {"lastUpdateTimestamp": 0, "maxOffset": 10, "minOffset": 0},
                                   MessageQueue("Orders", "broker-a", 1): {"lastUpdateTimestamp": 0, "maxOffset": 4, "minOffset": 0},
                                   MessageQueue("Orders", "broker-a", 2): {"lastUpdateTimestamp": 0, "maxOffset": 5, "minOffset": 0}}}
    bodies = {RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: groups, RequestCode.GET_ALL_CONSUMER_OFFSET: offsets,
              RequestCode.GET_TOPIC_STATS_INFO: topic_stats}

    def answer(call):
        if call.code == RequestCode.GET_BROKER_CONSUME_STATS:
            return reply(call.addr, ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
        return reply(call.addr, body=bodies[call.code])

    result, asked = run(group_survey_plan(["a:1"]), answer)
    assert asked == [[RequestCode.GET_BROKER_CONSUME_STATS],
                     [RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_ALL_CONSUMER_OFFSET],
                     [RequestCode.GET_TOPIC_STATS_INFO]]
    survey = result["a:1"]
    assert survey.stats_source == "GET_TOPIC_STATS_INFO" and survey.lag == {"G1": 7 + 0 + 5}  # queue 2: nothing committed
    assert survey.configs["G1"].consume_enable is False and "New" in survey.configs


def test_without_lag_only_the_tables_and_a_broker_error_is_kept() -> None:
    def answer(call):
        if call.addr == "b:2":
            return reply(call.addr, ResponseCode.SYSTEM_ERROR)
        return reply(call.addr, body={"offsetTable": {}} if call.code == RequestCode.GET_ALL_CONSUMER_OFFSET else {"subscriptionGroupTable": {}})

    result, asked = run(group_survey_plan(["a:1", "b:2"], lag=False), answer)
    assert asked == [[RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_ALL_CONSUMER_OFFSET] * 2]
    assert result["a:1"].error == "" and "nope" in result["b:2"].error


def test_the_fast_readers_agree_with_the_tolerant_one() -> None:
    body = json_compat.dumps({"offsetTable": {"T_1@G-1": {0: 5, 11: 7}, "%RETRY%G-1@G-1": {0: 0}}}).encode()
    assert _offset_table(body) == {("T_1", "G-1"): {0: 5, 11: 7}, ("%RETRY%G-1", "G-1"): {0: 0}}
    quoted = b'{"offsetTable":{"T@G":{"0":5}}}'  # a writer that quotes the keys
    assert _offset_table(quoted) == {("T", "G"): {0: 5}}
    stats = json_compat.dumps({"offsetTable": {MessageQueue("T", "b", 3): {"lastUpdateTimestamp": 1, "maxOffset": 9, "minOffset": 2}}}).encode()
    assert _topic_max_offsets(stats) == {3: 9}
    pretty = b'{"offsetTable":{{"brokerName":"b","queueId":3,"topic":"T"}:{"minOffset":2,"maxOffset":9}}}'  # other key order
    assert _topic_max_offsets(pretty) == {3: 9}


def _conn(cid: str) -> dict:
    return {"clientAddr": f"10.0.0.1:{len(cid)}", "clientId": cid, "language": "JAVA", "version": 413}


def test_connections_one_extension_call_per_broker() -> None:
    gantry = {"brokerAddr": "a:1", "groups": [
        {"group": "G1", "connectionSet": [_conn("c1")], "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
         "messageModel": "BROADCASTING", "subscriptionTable": {}},
        {"group": "NotShown", "connectionSet": [_conn("c9")], "consumeType": "CONSUME_ACTIVELY", "messageModel": "CLUSTERING",
         "subscriptionTable": {}}]}
    result, asked = run(consumer_connections_plan(["G1", "G2"], ["a:1", "b:2"]), lambda c: reply(c.addr, body=dict(gantry, brokerAddr=c.addr)))
    assert asked == [[RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS] * 2]
    assert set(result) == {"G1", "G2"} and not result["G2"].online
    g1 = result["G1"]
    assert [c.client_id for c in g1.connections] == ["c1"] and g1.broker_addrs == {"c1": ("a:1", "b:2")}
    assert g1.message_model == "BROADCASTING" and g1.consume_type == "CONSUME_PASSIVELY" and g1.errors == ()


def test_connections_fall_back_per_group_on_a_broker_without_the_extension() -> None:
    one = {"connectionSet": [_conn("c2")], "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET", "consumeType": "CONSUME_ACTIVELY",
           "messageModel": "CLUSTERING", "subscriptionTable": {}}

    def answer(call):
        if call.code == RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS:
            return reply(call.addr, ResponseCode.REQUEST_CODE_NOT_SUPPORTED if call.addr == "apache:9" else ResponseCode.SYSTEM_ERROR)
        if call.ext_fields["consumerGroup"] == "G2":
            return reply(call.addr, ResponseCode.CONSUMER_NOT_ONLINE)
        return reply(call.addr, body=one)

    result, asked = run(consumer_connections_plan(["G1", "G2"], ["apache:9", "down:1"]), answer)
    assert asked == [[RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS] * 2, [RequestCode.GET_CONSUMER_CONNECTION_LIST] * 2]
    assert [c.client_id for c in result["G1"].connections] == ["c2"] and result["G1"].broker_addrs == {"c2": ("apache:9",)}
    assert result["G1"].consume_type == "CONSUME_ACTIVELY" and not result["G2"].online
    assert all(len(result[g].errors) == 1 and result[g].errors[0].startswith("down:1:") for g in ("G1", "G2"))


def test_the_consume_stats_list_fast_reader_agrees_with_the_tolerant_one() -> None:
    import brokers.admin_extras as extras
    from brokers.engine.client.admin_bodies import load_object

    stats = {"brokerAddr": "a:1", "totalDiff": 9, "consumeStatsList": [
        {"G-1": [{"consumeTps": 1.5, "offsetTable": {MessageQueue("T_1", "broker-a", q): {"brokerOffset": 10 + q, "consumerOffset": q, "lastTimestamp": 5}
                                                      for q in range(12)}}]},
        {"%RETRY%x": []}]}
    body = json_compat.dumps(stats).encode()
    fast = extras._broker_consume_stats("a:1", body)
    original = extras._load_consume_stats_list
    try:
        extras._load_consume_stats_list = load_object
        slow = extras._broker_consume_stats("a:1", body)
    finally:
        extras._load_consume_stats_list = original
    assert fast == slow and fast.offsets[("T_1", "G-1")][11] == 11 and fast.lag["G-1"] == 120
    odd = body.replace(b'"queueId":3,', b'"queueId": 3,')  # another writer's spacing: the tolerant reader takes it
    assert extras._broker_consume_stats("a:1", odd) == fast
