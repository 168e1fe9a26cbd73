"""The name server over real TCP: REGISTER_BROKER frames in, routes out; expiry; bad requests."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


from brokers.engine.common.clock import ManualClock
from brokers.engine.common.json_compat import int_keys
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.register_body import body_crc32, decode_register_body, encode_register_body
from brokers.engine.namesrv.server import NamesrvConfig, NamesrvController
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.fixtures.waiting import eventually

REPO = Path(__file__).resolve().parents[4]


def run(coro, timeout: float = 20.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def register_request(
    name: str,
    addr: str,
    *topics: TopicConfig,
    cluster: str = "DefaultCluster",
    broker_id: int = 0,
    counter: int = 1,
    compressed: bool = False,
    crc: bool = True,
) -> RemotingCommand:
    body = encode_register_body(list(topics), {"counter": counter, "timestamp": 1700000000000}, compressed=compressed)
    ext = {
        "brokerName": name,
        "brokerAddr": addr,
        "clusterName": cluster,
        "haServerAddr": addr.rsplit(":", 1)[0] + ":10912",
        "brokerId": broker_id,
        "compressed": compressed,
        "bodyCrc32": body_crc32(body) if crc else 0,
    }
    return RemotingCommand.request(RequestCode.REGISTER_BROKER, ext, body)


class Namesrv:
    """A name server on an ephemeral port plus a client to talk to it."""

    def __init__(self, clock: ManualClock | None = None, **config):
        config.setdefault("port", 0)
        self.clock = clock or ManualClock()
        self.controller = NamesrvController(NamesrvConfig(**config), clock=self.clock)
        self.client = RemotingClient()

    async def __aenter__(self):
        await self.controller.start()
        self.addr = f"127.0.0.1:{self.controller.port}"
        return self

    async def __aexit__(self, *exc):
        await self.client.close()
        await self.controller.stop()

    async def call(
        self, code: int, ext: dict | None = None, body: bytes = b"", client: RemotingClient | None = None
    ) -> RemotingCommand:
        return await (client or self.client).invoke(self.addr, RemotingCommand.request(code, ext, body), 3.0)

    async def register(
        self, *args, client: RemotingClient | None = None, timeout_s: float = 3.0, **kwargs
    ) -> RemotingCommand:
        return await (client or self.client).invoke(self.addr, register_request(*args, **kwargs), timeout_s)

    async def route(self, topic: str) -> dict | None:
        response = await self.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        if response.code == ResponseCode.TOPIC_NOT_EXIST:
            return None
        assert response.code == 0, response
        return json.loads(response.body)  # standard JSON: Python's own parser must read it


def test_register_and_route_lookup_two_brokers():
    async def scenario():
        async with Namesrv() as ns:
            reply = await ns.register(
                "broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), TopicConfig("TBW102", 8, 8, perm=7)
            )
            assert reply.code == 0 and reply.ext("masterAddr") is None
            await ns.register("broker-b", "127.0.0.1:10921", TopicConfig("T", 2, 2))
            route = await ns.route("T")
            assert [q["brokerName"] for q in route["queueDatas"]] == ["broker-a", "broker-b"]
            assert [q["writeQueueNums"] for q in route["queueDatas"]] == [4, 2]
            assert {b["brokerName"]: int_keys(b["brokerAddrs"]) for b in route["brokerDatas"]} == {
                "broker-a": {0: "127.0.0.1:10911"},
                "broker-b": {0: "127.0.0.1:10921"},
            }
            assert route["filterServerTable"] == {}
            assert (await ns.route("TBW102"))["queueDatas"][0]["perm"] == 7

            missing = await ns.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "Nope"})
            assert missing.code == ResponseCode.TOPIC_NOT_EXIST == 17
            assert missing.remark == "No topic route info in name server for the topic: Nope"

            info = json.loads((await ns.call(RequestCode.GET_BROKER_CLUSTER_INFO)).body)
            assert info["clusterAddrTable"] == {"DefaultCluster": ["broker-a", "broker-b"]}
            assert info["brokerAddrTable"]["broker-b"]["brokerAddrs"] == {"0": "127.0.0.1:10921"}

            topics = json.loads((await ns.call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)).body)
            assert topics == {"topicList": ["T", "TBW102"]}
            by_cluster = json.loads(
                (await ns.call(RequestCode.GET_TOPICS_BY_CLUSTER, {"cluster": "DefaultCluster"})).body
            )
            assert by_cluster == {"topicList": ["T", "TBW102"]}
            assert json.loads((await ns.call(RequestCode.GET_TOPICS_BY_CLUSTER, {"cluster": "Other"})).body) == {
                "topicList": []
            }

    run(scenario())


def test_slave_registration_learns_master():
    async def scenario():
        async with Namesrv() as ns:
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4))
            reply = await ns.register("broker-a", "127.0.0.1:10915", TopicConfig("T", 4, 4), broker_id=1)
            assert reply.ext("masterAddr") == "127.0.0.1:10911" and reply.ext("haServerAddr") == "127.0.0.1:10912"

    run(scenario())


def test_wipe_and_add_write_perm():
    async def scenario():
        async with Namesrv() as ns:
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), TopicConfig("U", 4, 4))
            wiped = await ns.call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
            assert wiped.code == 0 and wiped.ext("wipeTopicCount") == "2"
            assert (await ns.route("T"))["queueDatas"][0]["perm"] == 4
            # The periodic re-registration with an unchanged data version keeps the wipe.
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), TopicConfig("U", 4, 4))
            assert (await ns.route("T"))["queueDatas"][0]["perm"] == 4
            added = await ns.call(RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"})
            assert added.ext("addTopicCount") == "2"
            assert (await ns.route("U"))["queueDatas"][0]["perm"] == 6

    run(scenario())


def test_delete_topic_in_namesrv():
    async def scenario():
        async with Namesrv() as ns:
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), cluster="C1")
            await ns.register(
                "broker-b", "127.0.0.1:10921", TopicConfig("T", 4, 4), TopicConfig("V", 1, 1), cluster="C2"
            )
            assert (await ns.call(RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": "T", "clusterName": "C1"})).code == 0
            assert [q["brokerName"] for q in (await ns.route("T"))["queueDatas"]] == ["broker-b"]
            assert (await ns.call(RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": "T"})).code == 0
            assert await ns.route("T") is None and await ns.route("V") is not None

    run(scenario())


def test_expiry_with_manual_clock_and_millisecond_scans():
    async def scenario():
        clock = ManualClock()
        async with Namesrv(clock, scan_not_active_broker_interval_s=0.01, broker_channel_expired_s=120) as ns:
            broker_a, broker_b = RemotingClient(), RemotingClient()  # each broker has its own connection
            try:
                await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), client=broker_a)
                await ns.register("broker-b", "127.0.0.1:10921", TopicConfig("T", 4, 4), client=broker_b)
                clock.advance(100)
                await ns.register(
                    "broker-b", "127.0.0.1:10921", TopicConfig("T", 4, 4), client=broker_b
                )  # b keeps beating
                clock.advance(21)  # a is now 121 s silent, b 21 s

                async def only_b():
                    route = await ns.route("T")
                    return route is not None and [q["brokerName"] for q in route["queueDatas"]] == ["broker-b"]

                assert await eventually(only_b)
                # The expired broker's connection was closed, the live one's was not.
                assert await eventually(lambda: _true(broker_a.addresses == []))
                assert broker_b.addresses == [ns.addr]
                clock.advance(200)
                assert await eventually(lambda: _none(ns.route("T")))
                assert ns.controller.route_info.get_all_cluster_info() == {
                    "brokerAddrTable": {},
                    "clusterAddrTable": {},
                }
                # Registering again (over a new connection) brings the route back.
                await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), client=broker_a)
                assert [q["brokerName"] for q in (await ns.route("T"))["queueDatas"]] == ["broker-a"]
            finally:
                await broker_a.close()
                await broker_b.close()

    run(scenario())


async def _true(value: bool) -> bool:
    return value


async def _none(coro) -> bool:
    return (await coro) is None


def test_connection_close_removes_the_broker_at_once():
    async def scenario():
        async with Namesrv() as ns:
            broker = RemotingClient()
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4), client=broker)
            await ns.register("broker-b", "127.0.0.1:10921", TopicConfig("T", 4, 4))
            await broker.close()

            async def only_b():
                return [q["brokerName"] for q in (await ns.route("T"))["queueDatas"]] == ["broker-b"]

            assert await eventually(only_b, timeout=2.0)
            assert ns.controller.route_info.broker_addrs() == ["127.0.0.1:10921"]

    run(scenario())


def test_unregister_broker():
    async def scenario():
        async with Namesrv() as ns:
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4))
            ext = {
                "brokerName": "broker-a",
                "brokerAddr": "127.0.0.1:10911",
                "clusterName": "DefaultCluster",
                "brokerId": 0,
            }
            assert (await ns.call(RequestCode.UNREGISTER_BROKER, ext)).code == 0
            assert await ns.route("T") is None

    run(scenario())


def test_several_name_servers_are_independent():
    async def scenario():
        async with Namesrv() as one, Namesrv() as two:
            await one.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4))
            await two.register("broker-b", "127.0.0.1:10921", TopicConfig("U", 4, 4))
            assert await one.route("T") is not None and await one.route("U") is None
            assert await two.route("U") is not None and await two.route("T") is None

    run(scenario())


def test_compressed_registration_and_crc_check():
    async def scenario():
        async with Namesrv() as ns:
            reply = await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 3, 5, perm=6), compressed=True)
            assert reply.code == 0
            queue = (await ns.route("T"))["queueDatas"][0]
            assert (queue["readQueueNums"], queue["writeQueueNums"]) == (3, 5)

            bad = register_request("broker-b", "127.0.0.1:10921", TopicConfig("V", 1, 1))
            bad.ext_fields["bodyCrc32"] = str((int(bad.ext_fields["bodyCrc32"]) + 1) & 0x7FFFFFFF)
            response = await ns.client.invoke(ns.addr, bad)
            assert response.code == ResponseCode.SYSTEM_ERROR and response.remark == "crc32 not match"
            assert await ns.route("V") is None

            no_crc = register_request("broker-b", "127.0.0.1:10921", TopicConfig("V", 1, 1), crc=False)
            assert (await ns.client.invoke(ns.addr, no_crc)).code == 0

    run(scenario())


def test_register_body_codec_round_trip():
    configs = [TopicConfig("T", 3, 5, perm=7, topic_filter_type="MULTI_TAG"), TopicConfig("%RETRY%g", 1, 1)]
    version = {"counter": 9, "timestamp": 1}
    for compressed in (False, True):
        body = decode_register_body(encode_register_body(configs, version, ["fs:1"], compressed=compressed), compressed)
        assert body.topic_config_wrapper["dataVersion"] == version and body.filter_server_list == ["fs:1"]
        table = body.topic_config_wrapper["topicConfigTable"]
        assert {
            t: (c["readQueueNums"], c["writeQueueNums"], c["perm"], c["topicFilterType"]) for t, c in table.items()
        } == {
            "T": (3, 5, 7, "MULTI_TAG"),
            "%RETRY%g": (1, 1, 6, "SINGLE_TAG"),
        }
    legacy = json.dumps({"dataVersion": version, "topicConfigTable": {"T": configs[0].to_json()}}).encode()
    assert decode_register_body(legacy).topic_config_wrapper["topicConfigTable"]["T"]["perm"] == 7
    assert decode_register_body(b"").topic_config_wrapper["topicConfigTable"] == {}


def test_bad_requests_are_answered():
    async def scenario():
        async with Namesrv() as ns:
            missing = register_request("broker-a", "127.0.0.1:10911")
            del missing.ext_fields["brokerName"]
            response = await ns.client.invoke(ns.addr, missing)
            assert response.code == ResponseCode.SYSTEM_ERROR and "brokerName" in response.remark

            response = await ns.call(RequestCode.GET_ROUTEINFO_BY_TOPIC)
            assert response.code == ResponseCode.SYSTEM_ERROR and "topic" in response.remark

            bad_id = register_request("broker-a", "127.0.0.1:10911")
            bad_id.ext_fields["brokerId"] = "zero"
            response = await ns.client.invoke(ns.addr, bad_id)
            assert response.code == ResponseCode.SYSTEM_ERROR and "brokerId" in response.remark

            garbage = RemotingCommand.request(
                RequestCode.REGISTER_BROKER, dict(register_request("b", "h:1").ext_fields, bodyCrc32=0), b"{not json"
            )
            response = await ns.client.invoke(ns.addr, garbage)
            assert response.code == ResponseCode.SYSTEM_ERROR and "not JSON" in response.remark

            unknown = await ns.call(RequestCode.SEND_MESSAGE)
            assert unknown.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED == 3
            assert ns.controller.route_info.get_all_topic_list() == []

    run(scenario())


def test_kv_config_and_query_data_version(tmp_path):
    async def scenario():
        path = str(tmp_path / "kvConfig.json")
        async with Namesrv(kv_config_path=path, order_message_enable=True) as ns:
            ext = {"namespace": "ORDER_TOPIC_CONFIG", "key": "T", "value": "broker-a:4"}
            assert (await ns.call(RequestCode.PUT_KV_CONFIG, ext)).code == 0
            got = await ns.call(RequestCode.GET_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"})
            assert got.code == 0 and got.ext("value") == "broker-a:4"
            listed = await ns.call(RequestCode.GET_KVLIST_BY_NAMESPACE, {"namespace": "ORDER_TOPIC_CONFIG"})
            assert json.loads(listed.body) == {"table": {"T": "broker-a:4"}}
            reply = await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("T", 4, 4))
            assert json.loads(reply.body) == {"table": {"T": "broker-a:4"}}
            assert (await ns.route("T"))["orderTopicConf"] == "broker-a:4"

            query_ext = {
                "brokerName": "broker-a",
                "brokerAddr": "127.0.0.1:10911",
                "clusterName": "DefaultCluster",
                "brokerId": 0,
            }
            same = await ns.call(RequestCode.QUERY_DATA_VERSION, query_ext, b'{"counter":1,"timestamp":1700000000000}')
            assert same.ext("changed") == "false" and json.loads(same.body) == {
                "counter": 1,
                "timestamp": 1700000000000,
            }
            newer = await ns.call(RequestCode.QUERY_DATA_VERSION, query_ext, b'{"counter":2,"timestamp":1700000000000}')
            assert newer.ext("changed") == "true"

            assert (
                await ns.call(RequestCode.DELETE_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"})
            ).code == 0
            gone = await ns.call(RequestCode.GET_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"})
            assert gone.code == ResponseCode.QUERY_NOT_FOUND
        assert json.loads(Path(path).read_text()) == {"configTable": {}}

    run(scenario())


def test_main_runs_until_sigterm():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = "import sys; from brokers.engine.namesrv.server import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--port", "0", "--scan-interval", "0.05", "--expire", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        line = ""
        deadline = time.monotonic() + 15
        while "ready" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
        assert "namesrv ready on 127.0.0.1:" in line, line
        port = int(line.strip().rsplit(":", 1)[1])

        async def ping():
            client = RemotingClient()
            try:
                return await client.invoke(
                    f"127.0.0.1:{port}", RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO)
                )
            finally:
                await client.close()

        assert run(ping()).code == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_main_reports_a_busy_port():
    async def scenario():
        async with Namesrv() as ns:
            env = dict(os.environ, PYTHONPATH=str(REPO))
            code = "import sys; from brokers.engine.namesrv.server import main; sys.exit(main(sys.argv[1:]))"
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                code,
                "--port",
                str(ns.controller.port),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=str(REPO),
            )
            out, _ = await asyncio.wait_for(proc.communicate(), 15)
            assert proc.returncode == 1 and b"failed to start" in out

    run(scenario())


def test_a_registration_of_65536_topics_does_not_hold_up_other_clients():
    """The largest registration the name server takes is decoded, checked and applied off its event loop:
    while it is being applied (held there until the test says go), another client's route lookup is
    answered; the route is whole after."""
    topics = [TopicConfig(f"Big{i}", 8, 8) for i in range(65_536)]
    applying, go = threading.Event(), threading.Event()
    waited_out = []

    async def scenario():
        async with Namesrv() as ns:
            await ns.register("broker-a", "127.0.0.1:10911", TopicConfig("Small", 1, 1))
            original = ns.controller.route_info.register_broker

            def held(*args, **kwargs):
                if args[2] == "broker-b":
                    applying.set()
                    waited_out.append(not go.wait(10))  # on the event loop, nothing below could answer meanwhile
                return original(*args, **kwargs)

            ns.controller.route_info.register_broker = held
            other = RemotingClient()
            try:
                # the big one's own time is not under test (a loaded machine takes seconds for 10 MB);
                # that it holds up no other client is
                big = asyncio.ensure_future(ns.register("broker-b", "127.0.0.1:10921", *topics, timeout_s=30))
                assert await asyncio.to_thread(applying.wait, 30)
                reply = await ns.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "Small"}, client=other)
                assert reply.code == ResponseCode.SUCCESS
                go.set()
                assert (await big).code == ResponseCode.SUCCESS
                assert waited_out == [False]
                route = await ns.route("Big65535")
                assert [q["brokerName"] for q in route["queueDatas"]] == ["broker-b"]
            finally:
                go.set()
                await other.close()

    run(scenario(), timeout=60)
