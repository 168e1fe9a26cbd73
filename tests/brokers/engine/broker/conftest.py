"""A real name server and real brokers on ephemeral loopback ports, stores under tmp_path,
and helpers that speak real frames to them through RemotingClient."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.controller import BrokerController
from brokers.engine.cluster import ClusterSpec, EngineCluster, GroupSpec
from brokers.engine.common import json_compat
from brokers.engine.common.message import properties_to_string
from brokers.engine.common.message_codec import decode_records
from brokers.engine.namesrv.server import NamesrvController
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.fixtures.waiting import eventually


# Small stores: a test writes kilobytes (1 MiB commit log segments, 1,000-unit queue files).
SMALL_STORE = {
    "commitlog_file_size": 1 << 20,
    "consume_queue_units_per_file": 1000,
    "max_index_hash_slots": 1000,
    "max_index_count": 4000,
}


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


@dataclass
class Notifications:
    """Records requests a broker sends to one client connection (NOTIFY_CONSUMER_IDS_CHANGED, ...)."""

    received: list[RemotingCommand] = field(default_factory=list)

    async def handler(self, ctx, request: RemotingCommand):
        self.received.append(request)
        return None

    def groups(self, code: int = RequestCode.NOTIFY_CONSUMER_IDS_CHANGED) -> list[str]:
        return [r.ext("consumerGroup") for r in self.received if r.code == code]


class Cluster:
    """One name server plus brokers (the engine's cluster harness, in-process); ``call`` sends a request
    to a broker and returns the reply."""

    eventually = staticmethod(eventually)

    def __init__(self, tmp_path: Path, broker_names=("broker-a",), **overrides) -> None:
        self.tmp_path = tmp_path
        self.broker_names = tuple(broker_names)
        self.overrides = overrides
        self.harness = EngineCluster(
            ClusterSpec(
                str(tmp_path),
                groups=tuple(GroupSpec(name) for name in self.broker_names),
                broker_overrides=overrides,
                store_overrides=SMALL_STORE,
            )
        )
        self.brokers: dict[str, BrokerController] = self.harness.brokers
        self.client = RemotingClient()

    def broker_config(self, name: str, **extra) -> BrokerConfig:
        return self.harness.broker_config(name, **extra)

    @property
    def namesrv(self) -> NamesrvController:
        return self.harness.namesrvs[0]

    @property
    def namesrv_addr(self) -> str:
        return self.harness.namesrv_addr

    async def __aenter__(self) -> Cluster:
        await self.harness.start()
        return self

    async def start_broker(self, name: str, **extra) -> BrokerController:
        return await self.harness.start_broker(name, **extra)

    async def restart_broker(self, name: str = "broker-a", **extra) -> BrokerController:
        await self.harness.stop_broker(name)
        await self.client.close()
        self.client = RemotingClient()
        return await self.harness.start_broker(name, **extra)

    async def __aexit__(self, *exc) -> None:
        await self.client.close()
        await self.harness.stop()

    @property
    def broker(self) -> BrokerController:
        return next(iter(self.brokers.values()))

    def addr(self, name: str | None = None) -> str:
        return (self.brokers[name] if name else self.broker).addr

    async def call(
        self,
        code: int,
        ext: dict | None = None,
        body: bytes = b"",
        *,
        broker: str | None = None,
        client: RemotingClient | None = None,
        timeout: float = 5.0,
    ) -> RemotingCommand:
        request = RemotingCommand.request(code, ext, body)
        return await (client or self.client).invoke(self.addr(broker), request, timeout)

    async def call_namesrv(self, code: int, ext: dict | None = None) -> RemotingCommand:
        return await self.client.invoke(self.namesrv_addr, RemotingCommand.request(code, ext), 5.0)

    async def route(self, topic: str) -> dict | None:
        response = await self.call_namesrv(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        return None if response.code == ResponseCode.TOPIC_NOT_EXIST else json_compat.loads(response.body)

    # -- admin --------------------------------------------------------------------------------

    async def create_topic(self, topic: str, read: int = 4, write: int = 4, perm: int = 6, **kw) -> RemotingCommand:
        ext = {
            "topic": topic,
            "defaultTopic": "TBW102",
            "readQueueNums": read,
            "writeQueueNums": write,
            "perm": perm,
            "topicFilterType": "SINGLE_TAG",
            "topicSysFlag": 0,
            "order": False,
        }
        ext.update(kw)
        return await self.call(RequestCode.UPDATE_AND_CREATE_TOPIC, ext)

    async def topics(self) -> dict:
        response = await self.call(RequestCode.GET_ALL_TOPIC_CONFIG)
        assert response.code == 0, response
        return json_compat.loads(response.body)["topicConfigTable"]

    # -- produce / consume --------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        body: bytes = b"hello",
        *,
        tags: str | None = None,
        keys: str | None = None,
        props: dict | None = None,
        queue_id: int = 0,
        code: int = RequestCode.SEND_MESSAGE_V2,
        group: str = "pg",
        extra: dict | None = None,
        **kw,
    ) -> RemotingCommand:
        properties = dict(props or {})
        if tags:
            properties["TAGS"] = tags
        if keys:
            properties["KEYS"] = keys
        fields = {
            "producerGroup": group,
            "topic": topic,
            "defaultTopic": "TBW102",
            "defaultTopicQueueNums": 4,
            "queueId": queue_id,
            "sysFlag": 0,
            "bornTimestamp": 1700000000000,
            "flag": 0,
            "properties": properties_to_string(properties),
            "reconsumeTimes": 0,
            "unitMode": False,
        }
        fields.update(extra or {})
        if code in (RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE):
            v2 = {
                "producerGroup": "a",
                "topic": "b",
                "defaultTopic": "c",
                "defaultTopicQueueNums": "d",
                "queueId": "e",
                "sysFlag": "f",
                "bornTimestamp": "g",
                "flag": "h",
                "properties": "i",
                "reconsumeTimes": "j",
                "unitMode": "k",
                "maxReconsumeTimes": "l",
                "batch": "m",
            }
            fields = {v2.get(k, k): v for k, v in fields.items()}
        return await self.call(code, fields, body, **kw)

    async def pull(
        self,
        topic: str,
        queue_id: int = 0,
        offset: int = 0,
        *,
        group: str = "cg",
        sub: str | None = "*",
        max_nums: int = 32,
        sys_flag: int | None = None,
        suspend_ms: int = 0,
        commit_offset: int = 0,
        timeout: float = 5.0,
        client: RemotingClient | None = None,
        **extra,
    ) -> RemotingCommand:
        if sys_flag is None:
            sys_flag = (0x4 if sub is not None else 0) | (0x2 if suspend_ms else 0)
        ext = {
            "consumerGroup": group,
            "topic": topic,
            "queueId": queue_id,
            "queueOffset": offset,
            "maxMsgNums": max_nums,
            "sysFlag": sys_flag,
            "commitOffset": commit_offset,
            "suspendTimeoutMillis": suspend_ms,
            "subVersion": 0,
        }
        if sub is not None:
            ext["subscription"] = sub
            ext["expressionType"] = "TAG"
        ext.update(extra)
        return await self.call(RequestCode.PULL_MESSAGE, ext, timeout=timeout, client=client)

    async def pull_messages(self, topic: str, queue_id: int = 0, offset: int = 0, **kw):
        response = await self.pull(topic, queue_id, offset, **kw)
        assert response.code == ResponseCode.SUCCESS, response
        return decode_records(response.body)

    async def max_offset(self, topic: str, queue_id: int = 0) -> int:
        response = await self.call(RequestCode.GET_MAX_OFFSET, {"topic": topic, "queueId": queue_id})
        assert response.code == 0, response
        return int(response.ext("offset"))

    async def heartbeat(
        self,
        client: RemotingClient,
        client_id: str,
        group: str,
        topics: dict[str, str] | None = None,
        producer_groups=(),
        model: str = "CLUSTERING",
        broker: str | None = None,
    ) -> RemotingCommand:
        subs = [
            {
                "topic": t,
                "subString": s,
                "tagsSet": [] if s == "*" else [x.strip() for x in s.split("||")],
                "codeSet": [],
                "subVersion": 1,
                "expressionType": "TAG",
                "classFilterMode": False,
            }
            for t, s in (topics or {}).items()
        ]
        body = {
            "clientID": client_id,
            "consumerDataSet": [
                {
                    "groupName": group,
                    "consumeType": "CONSUME_PASSIVELY",
                    "messageModel": model,
                    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                    "subscriptionDataSet": subs,
                    "unitMode": False,
                }
            ]
            if group
            else [],
            "producerDataSet": [{"groupName": g} for g in producer_groups],
        }
        return await self.call(RequestCode.HEART_BEAT, None, json.dumps(body).encode(), broker=broker, client=client)


@pytest.fixture
def engine_cluster(tmp_path):
    """A fresh in-process cluster of this test, on its tmp_path. A factory:
    ``async with engine_cluster(broker_names=..., **broker_overrides) as c: ...``."""

    def make(broker_names=("broker-a",), **overrides) -> Cluster:
        return Cluster(tmp_path, broker_names, **overrides)

    return make
