"""SQL92 subscriptions on a real broker: the pull filters by properties and TAGS, long polling waits
for a match, CHECK_CLIENT_CONFIG answers as RocketMQ's broker, and enable_property_filter off refuses."""

from __future__ import annotations

import asyncio
import json

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.startup import build_arg_parser, config_from_args
from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode

NOT_SUPPORTED = "The broker does not support consumer to filter message by SQL92"
ORDERS = [  # (body, tags, properties)
    (b"cheap-book", "book", {"price": "5", "region": "eu"}),
    (b"dear-book", "book", {"price": "50", "region": "eu"}),
    (b"dear-pen", "pen", {"price": "80", "region": "us"}),
    (b"no-price", "book", {"region": "eu"}),
    (b"odd-price", "book", {"price": "n/a", "region": "eu"}),
    (b"dear-cup", None, {"price": "90.5", "region": "eu"}),
]


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def send_orders(c, topic: str) -> None:
    for body, tags, props in ORDERS:
        assert (await c.send(topic, body, tags=tags, props=props)).code == ResponseCode.SUCCESS


async def sql_pull(c, topic: str, expression: str, offset: int = 0, **kw):
    return await c.pull(topic, 0, offset, sub=expression, expressionType="SQL92", **kw)


async def check_client_config(c, expression: str, kind: str = "SQL92"):
    body = {
        "clientId": "127.0.0.1@1",
        "group": "cg",
        "subscriptionData": {
            "topic": "T",
            "subString": expression,
            "expressionType": kind,
            "tagsSet": [],
            "codeSet": [],
            "subVersion": 1,
            "classFilterMode": False,
        },
    }
    return await c.call(RequestCode.CHECK_CLIENT_CONFIG, None, json.dumps(body).encode())


def test_a_sql92_pull_returns_exactly_the_matching_messages(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            await c.create_topic("Orders", read=1, write=1)
            await send_orders(c, "Orders")
            cases = {
                "price > 10 AND region = 'eu'": [b"dear-book"],  # 'n/a' and 90.5 fail Integer.valueOf: no match
                "price > 10.0": [b"dear-book", b"dear-pen", b"dear-cup"],
                "TAGS = 'book' AND price IS NOT NULL": [b"cheap-book", b"dear-book", b"odd-price"],
                "TAGS IN ('pen') OR price IS NULL": [b"dear-pen", b"no-price"],
                "TAGS IS NULL": [b"dear-cup"],
                "region <> 'eu'": [b"dear-pen"],
                "price BETWEEN 5 AND 50 AND TAGS STARTSWITH 'bo'": [b"cheap-book", b"dear-book"],
            }
            for expression, wanted in cases.items():
                response = await sql_pull(c, "Orders", expression)
                assert response.code == ResponseCode.SUCCESS, (expression, response)
                assert [m.body for m in decode_records(response.body)] == wanted, expression
                assert response.ext("nextBeginOffset") == "6", expression  # past the skipped ones too
            nothing = await sql_pull(c, "Orders", "region = 'asia'")
            assert nothing.code == ResponseCode.PULL_RETRY_IMMEDIATELY and nothing.ext("nextBeginOffset") == "6"
            later = await sql_pull(c, "Orders", "price > 10", offset=2)
            assert [m.body for m in decode_records(later.body)] == [b"dear-pen"]
            tags_still_work = await c.pull("Orders", sub="pen")
            assert [m.body for m in decode_records(tags_still_work.body)] == [b"dear-pen"]

    run(scenario())


def test_large_records_are_filtered_by_their_properties_alone(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            await c.create_topic("Big", read=1, write=1)
            for i in range(6):
                body = bytes([65 + i]) * (20_000 if i % 2 else 100)
                assert (await c.send("Big", body, props={"n": str(i)})).code == ResponseCode.SUCCESS
            response = await sql_pull(c, "Big", "n >= 3")
            assert [(m.properties["n"], len(m.body)) for m in decode_records(response.body)] == [
                ("3", 20_000),
                ("4", 100),
                ("5", 20_000),
            ]

    run(scenario())


def test_a_heartbeat_registered_sql92_subscription_filters_pulls_without_one(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            await c.create_topic("HB", read=1, write=1)
            await send_orders(c, "HB")
            client = RemotingClient()
            try:
                sub = {
                    "topic": "HB",
                    "subString": "price > 60",
                    "expressionType": "SQL92",
                    "tagsSet": [],
                    "codeSet": [],
                    "subVersion": 1,
                    "classFilterMode": False,
                }
                body = {
                    "clientID": "127.0.0.1@hb",
                    "producerDataSet": [],
                    "consumerDataSet": [
                        {
                            "groupName": "sqlg",
                            "consumeType": "CONSUME_PASSIVELY",
                            "messageModel": "CLUSTERING",
                            "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET",
                            "unitMode": False,
                            "subscriptionDataSet": [sub],
                        }
                    ],
                }
                assert (await c.call(RequestCode.HEART_BEAT, None, json.dumps(body).encode(), client=client)).code == 0
                response = await c.pull("HB", sub=None, group="sqlg")
                assert [m.body for m in decode_records(response.body)] == [b"dear-pen"]
            finally:
                await client.close()

    run(scenario())


def test_check_client_config_answers_as_rocketmq(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            assert (await check_client_config(c, "a > 5 AND b = 'x'")).code == ResponseCode.SUCCESS
            assert (await check_client_config(c, "TagA || TagB", "TAG")).code == ResponseCode.SUCCESS
            assert (await check_client_config(c, "anything", "")).code == ResponseCode.SUCCESS
            bad = await check_client_config(c, "a > 5 b = 1")
            assert bad.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
            assert bad.remark.startswith("Invalid MessageSelector. unexpected 'b' at line 1, column 7")
            too_long = await check_client_config(c, "a = '" + "x" * 5000 + "'")
            assert too_long.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED and "the limit of 4096" in too_long.remark
            other = await check_client_config(c, "a > 5", "CLASS")
            assert other.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED and "'CLASS' is not supported" in other.remark

    run(scenario())


def test_a_malformed_expression_fails_the_pull_naming_the_problem(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            await c.create_topic("Bad", read=1, write=1)
            await send_orders(c, "Bad")
            for expression, fragment in (
                ("price > 'ten'", "'ten' cannot be compared with >"),
                ("price > 10 region = 'eu'", "unexpected 'region' at line 1, column 12"),
                ("price IN (" + ", ".join(f"'{i}'" for i in range(520)) + ")", "the limit of 512 values"),
                ("", "the selector is empty"),
            ):
                response = await sql_pull(c, "Bad", expression, commit_offset=3, sys_flag=0x5)
                assert response.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED, (expression, response)
                assert fragment in response.remark, response.remark
            assert c.broker.consumer_offset_manager.query_offset("cg", "Bad", 0) == -1  # nothing committed
            assert (await sql_pull(c, "Bad", "price > 60")).code == ResponseCode.SUCCESS  # the broker is fine

    run(scenario())


def test_with_the_property_filter_off_sql92_is_refused_and_nothing_changes(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:  # RocketMQ's default: enablePropertyFilter=false
            assert c.broker.config_properties()["enablePropertyFilter"] == "false"
            await c.create_topic("Off", read=1, write=1)
            await send_orders(c, "Off")
            checked = await check_client_config(c, "price > 10")
            assert checked.code == ResponseCode.SYSTEM_ERROR and checked.remark.startswith(NOT_SUPPORTED)
            pulled = await sql_pull(c, "Off", "price > 10", commit_offset=2, sys_flag=0x5)
            assert pulled.code == ResponseCode.SYSTEM_ERROR and pulled.remark.startswith(NOT_SUPPORTED), pulled
            assert not pulled.body
            assert c.broker.consumer_offset_manager.query_offset("cg", "Off", 0) == -1
            assert (await check_client_config(c, "*", "TAG")).code == ResponseCode.SUCCESS
            assert len(decode_records((await c.pull("Off")).body)) == len(ORDERS)  # TAG pulls as before

    run(scenario())


def test_a_parked_sql92_pull_wakes_only_for_a_matching_message(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True) as c:
            await c.create_topic("Wait", read=1, write=1)
            pull = asyncio.ensure_future(sql_pull(c, "Wait", "price > 10", suspend_ms=15_000, timeout=20))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            assert (await c.send("Wait", b"cheap", props={"price": "5"})).code == 0
            assert (await c.send("Wait", b"unpriced", tags="x")).code == 0
            await asyncio.sleep(0.2)  # the arrivals are checked on the broker's loop
            assert not pull.done() and c.broker.pull_request_hold_service.parked_count == 1
            assert (await c.send("Wait", b"dear", props={"price": "50"})).code == 0
            response = await asyncio.wait_for(pull, 5)  # held for 15 s unless the matching message wakes it
            assert response.code == ResponseCode.SUCCESS, response
            assert [m.body for m in decode_records(response.body)] == [b"dear"]
            assert response.ext("nextBeginOffset") == "3"

    run(scenario())


def test_a_parked_sql92_pull_stays_parked_through_periodic_checks_that_find_no_match(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_property_filter=True, long_poll_check_interval_s=0.1) as c:
            await c.create_topic("Recheck", read=1, write=1)
            pull = asyncio.ensure_future(sql_pull(c, "Recheck", "price > 10", suspend_ms=15_000, timeout=20))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            assert (await c.send("Recheck", b"cheap", props={"price": "5"})).code == 0
            await asyncio.sleep(0.5)  # several periodic re-checks pass: none finds a match
            assert not pull.done()
            assert (await c.send("Recheck", b"dear", props={"price": "50"})).code == 0
            response = await asyncio.wait_for(pull, 5)
            assert [m.body for m in decode_records(response.body)] == [b"dear"]

    run(scenario())


def test_the_setting_is_off_by_default_and_on_with_its_flag(tmp_path):
    base = ["--name", "broker-a", "--store-dir", str(tmp_path)]
    assert config_from_args(build_arg_parser().parse_args(base)).enable_property_filter is False
    assert (
        config_from_args(build_arg_parser().parse_args([*base, "--enable-property-filter"])).enable_property_filter
        is True
    )
    assert BrokerConfig.from_dict(
        {"broker_name": "b", "store_dir": str(tmp_path), "enable_property_filter": True}
    ).enable_property_filter
