"""The fast paths of brokers.engine.client.admin_group_bodies read the bulk group bodies exactly as
the tolerant fastjson reader does (fastjson's bare integer keys and MessageQueue keys)."""

from __future__ import annotations

from brokers.engine.client.admin_group_bodies import (
    parse_consume_stats_list,
    parse_consumer_offset_table,
    parse_topic_max_offsets,
)
from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue


def test_the_fast_readers_agree_with_the_tolerant_one() -> None:
    body = json_compat.dumps({"offsetTable": {"T_1@G-1": {0: 5, 11: 7}, "%RETRY%G-1@G-1": {0: 0}}}).encode()
    assert parse_consumer_offset_table(body) == {("T_1", "G-1"): {0: 5, 11: 7}, ("%RETRY%G-1", "G-1"): {0: 0}}
    quoted = b'{"offsetTable":{"T@G":{"0":5}}}'  # a writer that quotes the keys
    assert parse_consumer_offset_table(quoted) == {("T", "G"): {0: 5}}
    stats = json_compat.dumps(
        {"offsetTable": {MessageQueue("T", "b", 3): {"lastUpdateTimestamp": 1, "maxOffset": 9, "minOffset": 2}}}
    ).encode()
    assert parse_topic_max_offsets(stats) == {3: 9}
    pretty = (
        b'{"offsetTable":{{"brokerName":"b","queueId":3,"topic":"T"}:{"minOffset":2,"maxOffset":9}}}'  # other key order
    )
    assert parse_topic_max_offsets(pretty) == {3: 9}


def test_the_consume_stats_list_fast_reader_agrees_with_the_tolerant_one() -> None:
    stats = {
        "brokerAddr": "a:1",
        "totalDiff": 9,
        "consumeStatsList": [
            {
                "G-1": [
                    {
                        "consumeTps": 1.5,
                        "offsetTable": {
                            MessageQueue("T_1", "broker-a", q): {
                                "brokerOffset": 10 + q,
                                "consumerOffset": q,
                                "lastTimestamp": 5,
                            }
                            for q in range(12)
                        },
                    }
                ]
            },
            {"%RETRY%x": []},
        ],
    }
    body = json_compat.dumps(stats).encode()
    fast = parse_consume_stats_list("a:1", body)
    assert fast.offsets[("T_1", "G-1")][11] == 11 and fast.lag["G-1"] == 120
    # another writer's spacing: one key the fast path does not rewrite makes the whole body the
    # tolerant reader's, so this is the tolerant reading of the same stats
    odd = body.replace(b'"queueId":3,', b'"queueId": 3,')
    assert parse_consume_stats_list("a:1", odd) == fast


def test_the_consume_delay_counts_from_the_earliest_last_timestamp_behind_a_backlog() -> None:
    from brokers.engine.client.admin_group_bodies import backlog_since, consume_delay_s, merge_backlog_since

    assert backlog_since([(5, 5, 100)]) is None  # caught up: no delay
    assert backlog_since([(5, 3, 300), (9, 2, 200), (4, 4, 50)]) == 200
    assert (
        backlog_since([(5, 0, 0)]) == 0 and backlog_since([(5, 0, 0), (5, 1, 70)]) == 70
    )  # nothing consumed yet: unknown
    assert (
        merge_backlog_since([None, 400, 0]) == 400
        and merge_backlog_since([None, None]) is None
        and merge_backlog_since([0]) == 0
    )
    assert (
        consume_delay_s(None, 10_000) == 0.0
        and consume_delay_s(0, 10_000) is None
        and consume_delay_s(7_500, 10_000) == 2.5
    )
    stats = {
        "consumeStatsList": [
            {
                "G": [
                    {
                        "consumeTps": 0,
                        "offsetTable": {
                            MessageQueue("T", "b", 0): {"brokerOffset": 3, "consumerOffset": 1, "lastTimestamp": 1_000},
                            MessageQueue("T", "b", 1): {"brokerOffset": 2, "consumerOffset": 2, "lastTimestamp": 500},
                        },
                    }
                ]
            },
            {
                "H": [
                    {
                        "consumeTps": 0,
                        "offsetTable": {
                            MessageQueue("T", "b", 0): {"brokerOffset": 3, "consumerOffset": 3, "lastTimestamp": 9}
                        },
                    }
                ]
            },
        ]
    }
    survey = parse_consume_stats_list("a:1", json_compat.dumps(stats).encode())
    assert survey.backlog_since == {"G": 1_000}
