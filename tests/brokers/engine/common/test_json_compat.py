"""The fastjson-dialect reader and writer, on bodies captured from Java RocketMQ."""

from __future__ import annotations

import json

import pytest

from brokers.engine.common.json_compat import JsonCompatError, dumps, dumps_standard, int_keys, loads
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig

CLUSTER_INFO = (
    '{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a",'
    '"cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}'
)
CONSUME_STATS = (
    '{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:'
    '{"brokerOffset":120,"consumerOffset":118,"lastTimestamp":1700000000123},'
    '{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":5,"consumerOffset":5,"lastTimestamp":0}}}'
)
TOPIC_STATS = (
    '{"offsetTable":{{"brokerName":"rocketmq-broker-a","queueId":2,"topic":"test"}:'
    '{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}}}'
)


def test_standard_json_passes_through():
    assert loads('{"a":[1,2.5,"x",true,null],"b":{"0":"q"}}') == {"a": [1, 2.5, "x", True, None], "b": {"0": "q"}}
    assert loads(b'{"k":"\\u00e9"}') == {"k": "é"}


def test_bare_integer_keys_become_ints():
    data = loads(CLUSTER_INFO)
    assert data["brokerAddrTable"]["broker-a"]["brokerAddrs"] == {0: "127.0.0.1:10911"}
    assert loads("{0:12,1:10,-1:3}") == {0: 12, 1: 10, -1: 3}
    assert loads('{"offsetTable":{"T@g":{0:5,1:7}}}') == {"offsetTable": {"T@g": {0: 5, 1: 7}}}


def test_inline_message_queue_keys():
    data = loads(CONSUME_STATS)
    mq0 = MessageQueue("T", "broker-a", 0)
    assert data["offsetTable"][mq0] == {"brokerOffset": 120, "consumerOffset": 118, "lastTimestamp": 1700000000123}
    assert sorted(data["offsetTable"]) == [mq0, MessageQueue("T", "broker-a", 1)]
    assert loads(TOPIC_STATS)["offsetTable"][MessageQueue("test", "rocketmq-broker-a", 2)]["maxOffset"] == 0


def test_other_object_keys_become_sorted_tuples():
    data = loads('{{"b":1,"a":[1,2]}:"v"}')
    assert data == {(("a", (1, 2)), ("b", 1)): "v"}


def test_single_quotes_and_whitespace():
    assert loads("{ 'a' : 'it\\'s', 0 : [ 1 , 'x\"y' ] }") == {"a": "it's", 0: [1, 'x"y']}


@pytest.mark.parametrize("bad", ["{0:}", "{a:1}", "[1,2", '{"a":1}x', "{{}:1", ""])
def test_malformed_text_raises(bad):
    with pytest.raises((JsonCompatError, ValueError)):
        loads(bad)


def test_int_keys_normalises_both_forms():
    assert int_keys({"0": "a", 1: "b"}) == {0: "a", 1: "b"}
    assert int_keys(None) == {}


def test_dumps_writes_the_fastjson_dialect():
    assert dumps(loads(CLUSTER_INFO)) == CLUSTER_INFO
    assert dumps(loads(CONSUME_STATS)) == CONSUME_STATS
    assert dumps(loads(TOPIC_STATS)) == TOPIC_STATS
    table = {MessageQueue("T", "b", 1): {"minOffset": 0}, MessageQueue("T", "b", 0): {"minOffset": 0}}
    assert dumps({"offsetTable": table}) == (
        '{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"minOffset":0},'
        '{"brokerName":"b","queueId":1,"topic":"T"}:{"minOffset":0}}}'
    )


def test_dumps_values_with_to_json_and_sets():
    config = TopicConfig("T", 4, 4)
    text = dumps({"topicConfigTable": {"T": config}, "mqSet": {MessageQueue("T", "b", 1), MessageQueue("T", "b", 0)}})
    back = json.loads(text)
    assert back["topicConfigTable"]["T"]["readQueueNums"] == 4
    assert [m["queueId"] for m in back["mqSet"]] == [0, 1]
    with pytest.raises(TypeError):
        dumps({"x": object()})


def test_dumps_pretty_matches_fastjson_layout():
    text = dumps({"offsetTable": {"T@g": {0: 5}}, "a": []}, pretty=True)
    assert text == '{\n\t"a":[],\n\t"offsetTable":{\n\t\t"T@g":{\n\t\t\t0:5\n\t\t}\n\t}\n}'
    assert loads(text) == {"a": [], "offsetTable": {"T@g": {0: 5}}}


def test_dumps_standard_quotes_keys_and_escapes():
    data = {"brokerAddrs": {1: "b", 0: "a"}, "name": "brökér"}
    text = dumps_standard(data)
    assert text == '{"brokerAddrs":{"0":"a","1":"b"},"name":"br\\u00f6k\\u00e9r"}'
    assert json.loads(text)["brokerAddrs"] == {"0": "a", "1": "b"}


QUEUE_TABLES = [
    # ConsumeStats' offsetTable, values in their own (sorted) order, 10 queues so that 2 < 10 numerically
    {MessageQueue("T", "b", q): {"brokerOffset": 100 + q, "consumerOffset": q, "lastTimestamp": 0} for q in range(11)},
    # fields not in sorted order, a negative number, names to escape (quote, backslash, %, non-ASCII, control)
    {MessageQueue('t"%\\', "brökér", 3): {"zeta": -1, "%d": 7, "alpha": 2**63}, MessageQueue("t\n", "b", 0): {"a": 0}},
    {MessageQueue("T", "b", 1): 5, MessageQueue("T", "a", 1): 6},  # an offset table of plain numbers
    {MessageQueue("T", "b", 0): {}},  # an empty map
    # shapes the fast path leaves to the general writer: a bool, a float, a nested map, a str value, a
    # non-str field name, a key that is not a queue after the first
    {MessageQueue("T", "b", 0): {"flag": True}},
    {MessageQueue("T", "b", 0): {"tps": 1.5}},
    {MessageQueue("T", "b", 0): {"wrapper": {"x": 1}}},
    {MessageQueue("T", "b", 0): "five"},
    {MessageQueue("T", "b", 0): {1: 2}},
    {MessageQueue("T", "b", 0): 1, MessageQueue("T", "b", 1): [1]},
]


@pytest.mark.parametrize("table", QUEUE_TABLES)
def test_queue_tables_are_written_as_the_general_writer_writes_them(table, monkeypatch):
    """Queue-keyed tables have a fast path (stats bodies hold one entry per queue); its text must be
    the general writer's, byte for byte, and whatever it does not handle goes to the general writer."""
    from brokers.engine.common import json_compat

    body = {"offsetTable": table, "consumeTps": 0.0}
    fast = dumps(body)
    monkeypatch.setattr(json_compat, "_queue_table_text", lambda items: None)
    assert fast == dumps(body)
    if all(isinstance(v, (int, dict)) and not isinstance(v, bool) for v in table.values()):
        assert loads(fast) == body  # read back as written
