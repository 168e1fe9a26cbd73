"""The group survey plan of brokers.gateway.groups, stepped by hand (a plan does no I/O): one
GET_BROKER_CONSUME_STATS per broker where the broker serves it, the bulk tables and per-topic
stats where it answers "not supported"."""

from __future__ import annotations

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.gateway.groups import group_survey_plan
from tests.brokers.gateway._plans import reply, run

MQ = MessageQueue("Orders", "broker-a", 0)


def test_one_request_per_broker_where_brokers_serve_broker_consume_stats() -> None:
    stats = {
        "brokerAddr": "a:1",
        "totalDiff": 7,
        "consumeStatsList": [
            {
                "G1": [
                    {
                        "consumeTps": 2.5,
                        "offsetTable": {
                            MQ: {"brokerOffset": 10, "consumerOffset": 3, "lastTimestamp": 0},
                            MessageQueue("Orders", "broker-a", 1): {
                                "brokerOffset": 4,
                                "consumerOffset": 4,
                                "lastTimestamp": 0,
                            },
                        },
                    }
                ]
            },
            {"Idle": []},
        ],
    }
    groups = {
        "dataVersion": {},
        "subscriptionGroupTable": {"G1": {"groupName": "G1", "consumeEnable": False}, "Idle": {"groupName": "Idle"}},
    }
    result, asked = run(
        group_survey_plan(["a:1"]),
        lambda c: reply(c.addr, body=stats if c.code == RequestCode.GET_BROKER_CONSUME_STATS else groups),
    )
    assert asked == [
        [RequestCode.GET_BROKER_CONSUME_STATS, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG]
    ]  # the configs: consumeEnable
    survey = result["a:1"]
    assert (
        survey.stats_source == "GET_BROKER_CONSUME_STATS"
        and survey.lag == {"G1": 7, "Idle": 0}
        and survey.tps == {"G1": 2.5}
    )
    assert survey.offsets == {("Orders", "G1"): {0: 3, 1: 4}} and set(survey.configs) == {"G1", "Idle"}
    assert survey.topic_lag == {("Orders", "G1"): 7}  # the topic alert rules' reading
    assert survey.configs["G1"].consume_enable is False and survey.configs["Idle"].consume_enable is True


def test_a_broker_without_it_is_read_from_its_tables_and_topic_stats() -> None:
    groups = {
        "dataVersion": {},
        "subscriptionGroupTable": {"G1": {"groupName": "G1", "consumeEnable": False}, "New": {"groupName": "New"}},
    }
    offsets = {"offsetTable": {"Orders@G1": {0: 3, 1: 4}}}
    topic_stats = {
        "offsetTable": {
            MQ: {"lastUpdateTimestamp": 0, "maxOffset": 10, "minOffset": 0},
            MessageQueue("Orders", "broker-a", 1): {"lastUpdateTimestamp": 0, "maxOffset": 4, "minOffset": 0},
            MessageQueue("Orders", "broker-a", 2): {"lastUpdateTimestamp": 0, "maxOffset": 5, "minOffset": 0},
        }
    }
    bodies = {
        RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: groups,
        RequestCode.GET_ALL_CONSUMER_OFFSET: offsets,
        RequestCode.GET_TOPIC_STATS_INFO: topic_stats,
    }

    def answer(call):
        if call.code == RequestCode.GET_BROKER_CONSUME_STATS:
            return reply(call.addr, ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
        return reply(call.addr, body=bodies[call.code])

    result, asked = run(group_survey_plan(["a:1"]), answer)
    assert asked == [
        [RequestCode.GET_BROKER_CONSUME_STATS, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG],
        [RequestCode.GET_ALL_CONSUMER_OFFSET],  # the configs were answered already
        [RequestCode.GET_TOPIC_STATS_INFO],
    ]
    survey = result["a:1"]
    assert survey.stats_source == "GET_TOPIC_STATS_INFO" and survey.lag == {
        "G1": 7 + 0 + 5
    }  # queue 2: nothing committed
    assert survey.topic_lag == {("Orders", "G1"): 12}
    assert survey.configs["G1"].consume_enable is False and "New" in survey.configs


def test_without_lag_only_the_tables_and_a_broker_error_is_kept() -> None:
    def answer(call):
        if call.addr == "b:2":
            return reply(call.addr, ResponseCode.SYSTEM_ERROR)
        return reply(
            call.addr,
            body={"offsetTable": {}}
            if call.code == RequestCode.GET_ALL_CONSUMER_OFFSET
            else {"subscriptionGroupTable": {}},
        )

    result, asked = run(group_survey_plan(["a:1", "b:2"], lag=False), answer)
    assert asked == [[RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_ALL_CONSUMER_OFFSET] * 2]
    assert result["a:1"].error == "" and "nope" in result["b:2"].error
