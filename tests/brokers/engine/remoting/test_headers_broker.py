"""The broker's remaining headers (ACL admin, clients and single-config reads, broker-to-client pushes,
CONSUMER_SEND_MSG_BACK, Gantry's own codes): each through real frames of both serialize types, the
wire names Apache's clients and mqadmin send, the refusals that name a missing field, and a live
broker reading them. The checks every header gets (a round trip through both frame types, the
defaults, each missing field named) are test_headers.py's, over every module of the package."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from brokers.engine.common import json_compat
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import SERIALIZE_ROCKETMQ, RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers import RequestHeader
from brokers.engine.remoting.headers import acl, brokers, pushes, replication
from brokers.engine.remoting.headers.acl import (
    CreateAccessConfigRequestHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)
from brokers.engine.remoting.headers.base import empty_is_a_value
from brokers.engine.remoting.headers.brokers import (
    GetConsumerListByGroupRequestHeader,
    GetProducerConnectionListRequestHeader,
    UnregisterClientRequestHeader,
)
from brokers.engine.remoting.headers.consume import ConsumerSendMsgBackRequestHeader
from brokers.engine.remoting.headers.pushes import NotifyConsumerIdsChangedRequestHeader
from brokers.engine.remoting.headers.replication import PromoteSlaveRequestHeader
from tests.brokers.engine.broker.conftest import Cluster, run

MODULES = (acl, brokers, pushes, replication)
HEADER_CLASSES = [
    *(c for m in MODULES for c in (getattr(m, n) for n in m.__all__)),
    ConsumerSendMsgBackRequestHeader,
]


def test_every_class_is_a_request_header_with_its_own_codes() -> None:
    assert len(HEADER_CLASSES) == 18
    codes = [code for cls in HEADER_CLASSES for code in cls.CODES]
    assert all(issubclass(cls, RequestHeader) and cls.CODES for cls in HEADER_CLASSES)
    assert len(codes) == len(set(codes))


def test_wire_names_are_rocketmqs() -> None:
    assert UnregisterClientRequestHeader(client_id="c1", consumer_group="G").encode() == {
        "clientID": "c1",
        "consumerGroup": "G",
    }
    back = ConsumerSendMsgBackRequestHeader(
        offset=1 << 40, group="G", delay_level=0, origin_msg_id="M", max_reconsume_times=16, broker_name="b"
    )
    assert back.encode() == {
        "offset": str(1 << 40),
        "group": "G",
        "delayLevel": "0",
        "originMsgId": "M",
        "unitMode": "false",
        "maxReconsumeTimes": "16",
        "bname": "b",
    }
    promote = PromoteSlaveRequestHeader(broker_name="broker-a", broker_id=1, dry_run=True)
    assert promote.encode() == {"brokerName": "broker-a", "brokerId": "1", "force": "false", "dryRun": "true"}
    with pytest.raises(RemotingCommandError, match=r"^the custom field <brokerId> is not an integer: 'one'$"):
        PromoteSlaveRequestHeader.decode({"brokerName": "broker-a", "brokerId": "one"})


def test_an_acl_change_keeps_an_empty_value_apart_from_an_absent_one() -> None:
    ext = CreateAccessConfigRequestHeader(access_key="app-1", topic_perms="", white_remote_address="").encode()
    assert ext == {"accessKey": "app-1", "admin": "false", "topicPerms": "", "whiteRemoteAddress": ""}
    request = RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, ext)
    request.serialize_type = SERIALIZE_ROCKETMQ  # a binary header cannot carry "": the frame goes as JSON
    decoded = CreateAccessConfigRequestHeader.decode(RemotingCommand.decode_frame(request.encode()))
    assert (decoded.topic_perms, decoded.white_remote_address, decoded.group_perms) == ("", "", None)
    with pytest.raises(RemotingCommandError, match=r"^the custom field <accessKey> is missing$"):
        CreateAccessConfigRequestHeader.decode({"accessKey": "", "topicPerms": ""})
    assert UpdateGlobalWhiteAddrsConfigRequestHeader.decode({"globalWhiteAddrs": ""}).global_white_addrs == ""
    with pytest.raises(RemotingCommandError, match=r"<globalWhiteAddrs> is missing"):
        UpdateGlobalWhiteAddrsConfigRequestHeader.decode({"aclFileFullPath": "/x"})


def test_only_a_str_field_may_keep_an_empty_value() -> None:
    @dataclass(frozen=True, slots=True, kw_only=True)
    class Odd(RequestHeader):
        count: int | None = field(default=None, metadata=empty_is_a_value())

    with pytest.raises(TypeError, match="Odd.count"):
        Odd().encode()


class Member:
    """A client connection of its own that records what the broker pushes to it."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self.pushed: list[RemotingCommand] = []
        self.client = RemotingClient()
        self.client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._on_push)

    async def _on_push(self, ctx: object, request: RemotingCommand) -> None:
        self.pushed.append(request)


def test_a_broker_reads_the_typed_headers_and_names_a_missing_field_changing_nothing(tmp_path) -> None:
    async def scenario() -> None:
        async with Cluster(tmp_path) as c:
            await c.create_topic("T")
            member = Member("10.0.0.1@a")
            try:
                joined = await c.heartbeat(member.client, member.client_id, "G", {"T": "*"}, producer_groups=("P",))
                assert joined.code == ResponseCode.SUCCESS
                await c.eventually(lambda: len(member.pushed) >= 1)
                assert NotifyConsumerIdsChangedRequestHeader.decode(member.pushed[0]).consumer_group == "G"

                ids = await c.call(
                    RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                    GetConsumerListByGroupRequestHeader(consumer_group="G").encode(),
                )
                assert json_compat.loads(ids.body)["consumerIdList"] == [member.client_id]
                producers = await c.call(
                    RequestCode.GET_PRODUCER_CONNECTION_LIST,
                    GetProducerConnectionListRequestHeader(producer_group="P").encode(),
                )
                assert producers.code == ResponseCode.SUCCESS

                for code, ext, named in (
                    (RequestCode.UNREGISTER_CLIENT, {"consumerGroup": "G"}, "clientID"),
                    (RequestCode.CONSUMER_SEND_MSG_BACK, {"offset": "0", "group": "G"}, "delayLevel"),
                    (RequestCode.GET_PRODUCER_CONNECTION_LIST, {}, "producerGroup"),
                    (RequestCode.GANTRY_GET_POP_STATE, {"topic": "T"}, "consumerGroup"),
                    (RequestCode.GANTRY_PROMOTE_SLAVE, {"brokerId": "1"}, "brokerName"),
                ):
                    refused = await c.call(code, ext)
                    assert (refused.code, refused.remark) == (
                        ResponseCode.SYSTEM_ERROR,
                        f"the custom field <{named}> is missing",
                    ), code
                assert [r.code for r in member.pushed] == [RequestCode.NOTIFY_CONSUMER_IDS_CHANGED] * len(member.pushed)
                still = await c.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "G"})
                assert json_compat.loads(still.body)["consumerIdList"] == [member.client_id]

                leave = UnregisterClientRequestHeader(
                    client_id=member.client_id, consumer_group="G", producer_group="P"
                )
                left = await c.call(RequestCode.UNREGISTER_CLIENT, leave.encode(), client=member.client)
                assert left.code == ResponseCode.SUCCESS
                gone = await c.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "G"})
                assert gone.code == ResponseCode.SYSTEM_ERROR and gone.remark == "no consumer for this group, G"
            finally:
                await member.client.close()

    run(scenario())
