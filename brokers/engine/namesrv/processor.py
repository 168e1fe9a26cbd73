"""The name server's request handlers: request code -> RouteInfoManager / KvConfigManager.

Served codes: REGISTER_BROKER (103), UNREGISTER_BROKER (104), GET_ROUTEINFO_BY_TOPIC (105),
GET_BROKER_CLUSTER_INFO (106), WIPE_WRITE_PERM_OF_BROKER (205),
GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206), DELETE_TOPIC_IN_NAMESRV (216), GET_TOPICS_BY_CLUSTER
(224), QUERY_DATA_VERSION (322), ADD_WRITE_PERM_OF_BROKER (327) and the KV config codes 100, 101,
102, 219; and three that RocketMQ 5.x brokers send: REGISTER_TOPIC_IN_NAMESRV (217, one new topic, with
``enableSingleTopicRegister``), GET_BROKER_MEMBER_GROUP (901, the broker's group; every second with
``enableSlaveActingMaster``) and BROKER_HEARTBEAT (904, a liveness refresh like 322's; every second with
``enableSlaveActingMaster``). The registration's ``heartbeatTimeoutMillis`` (5.x) is not honoured: a broker
expires after ``broker_channel_expired_s`` or when its connection closes.  Every other code is answered
REQUEST_CODE_NOT_SUPPORTED (the 4.9.8 Java name server stays silent instead, leaving the caller to time out).

REGISTER_BROKER takes Gantry's optional ``gantryEpoch`` header field (the broker's group epoch)
and answers ``gantryEpoch`` (the broker name's highest); a broker id 0 registering a lower
epoch than its group's master is answered SYSTEM_ERROR "stale epoch N < M; the master of NAME
is now ADDR" with ``masterAddr``, ``haServerAddr``, ``gantryEpoch`` and ``gantrySlaveId`` (the
id to rejoin the group with) and changes no route (``route_info.py``).

Gantry refuses route hijacks (docs/namesrv-guard.md; RocketMQ 4.x's name server trusts everyone),
each with SYSTEM_ERROR and a remark, changing nothing: a registration whose header or body breaks
``register_body_rules.py`` (names, queue counts, perms, sizes); one whose ``brokerAddr`` is not on
the connecting peer's host (``broker_address_rule.py``); one claiming an id a live registration from
another connection holds at another address (``broker_claims.py``; a higher epoch is a promotion);
and 104/322/205/327/216/100/102 from a connection ``route_write_rule.py`` does not let act on the
brokers they touch. Route reads are unchanged.

Route and cluster bodies are written as standard JSON (quoted broker-id keys, sorted, non-ASCII
escaped) whatever the client's version: Java clients read it through fastjson, eval-style
JavaScript clients through JSON2, and strict JSON parsers (Go, Python) need it.

Each code's header, and each answer's custom header, is a typed class of
:mod:`brokers.engine.remoting.headers.namesrv`; a missing required header field raises
RemotingCommandError, which the server answers SYSTEM_ERROR with a remark naming it.
"""

from __future__ import annotations

import asyncio

import json
from collections.abc import Callable
from typing import Any, TypeVar

from brokers.engine.common import json_compat
from brokers.engine.common.clock import Clock
from brokers.engine.namesrv.broker_address_rule import BrokerAddressRule
from brokers.engine.namesrv.kv_config import ORDER_TOPIC_CONFIG, KvConfigManager
from brokers.engine.namesrv.register_body import RegisterBodyError, RegisterBrokerBody, body_crc32, decode_register_body
from brokers.engine.namesrv.register_body_rules import check_registration, check_topic_registration
from brokers.engine.namesrv.route_info import RouteInfoManager
from brokers.engine.namesrv.route_write_rule import RouteWriteRule
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.namesrv import (
    AddWritePermOfBrokerRequestHeader,
    AddWritePermOfBrokerResponseHeader,
    BrokerHeartbeatRequestHeader,
    DeleteKVConfigRequestHeader,
    GetBrokerMemberGroupRequestHeader,
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    GetKVListByNamespaceRequestHeader,
    GetTopicsByClusterRequestHeader,
    PutKVConfigRequestHeader,
    QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    RegisterTopicRequestHeader,
    UnRegisterBrokerRequestHeader,
    WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
)
from brokers.engine.remoting.headers.topics import DeleteTopicFromNamesrvRequestHeader, GetRouteInfoRequestHeader
from brokers.engine.remoting.server import RemotingServer


MAX_BROKER_ID = 1024  # ids of one broker group: a master (0) and its slaves; RocketMQ sets no bound


def _json_body(value: object) -> bytes:
    return json_compat.dumps_standard(value).encode("utf-8")


class NamesrvProcessor:
    """Handlers for every code the name server serves; ``register(server)`` installs them."""

    def __init__(
        self,
        route_info: RouteInfoManager,
        kv_config: KvConfigManager,
        clock: Clock,
        *,
        order_message_enable: bool = False,
        address_rule: BrokerAddressRule | None = None,
        write_rule: RouteWriteRule | None = None,
    ) -> None:
        self.route_info = route_info
        self.kv_config = kv_config
        self.clock = clock
        self.order_message_enable = order_message_enable
        self.address_rule = address_rule or BrokerAddressRule()
        self.write_rule = write_rule or RouteWriteRule(route_info, acl_on=False)

    def register(self, server: RemotingServer) -> None:
        handlers = {
            RequestCode.PUT_KV_CONFIG: self.put_kv_config,
            RequestCode.GET_KV_CONFIG: self.get_kv_config,
            RequestCode.DELETE_KV_CONFIG: self.delete_kv_config,
            RequestCode.GET_KVLIST_BY_NAMESPACE: self.get_kv_list_by_namespace,
            RequestCode.REGISTER_BROKER: self.register_broker,
            RequestCode.UNREGISTER_BROKER: self.unregister_broker,
            RequestCode.GET_ROUTEINFO_BY_TOPIC: self.get_route_info_by_topic,
            RequestCode.GET_BROKER_CLUSTER_INFO: self.get_broker_cluster_info,
            RequestCode.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm_of_broker,
            RequestCode.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm_of_broker,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topic_list,
            RequestCode.DELETE_TOPIC_IN_NAMESRV: self.delete_topic_in_namesrv,
            RequestCode.GET_TOPICS_BY_CLUSTER: self.get_topics_by_cluster,
            RequestCode.QUERY_DATA_VERSION: self.query_data_version,
            RequestCode.REGISTER_TOPIC_IN_NAMESRV: self.register_topic_in_namesrv,
            RequestCode.GET_BROKER_MEMBER_GROUP: self.get_broker_member_group,
            RequestCode.BROKER_HEARTBEAT: self.broker_heartbeat,
        }
        for code, handler in handlers.items():
            server.register_processor(code, handler)

    # -- brokers -------------------------------------------------------------------------------

    async def register_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = RegisterBrokerRequestHeader.decode(request)
        broker_name, broker_addr, cluster_name = header.broker_name, header.broker_addr, header.cluster_name
        broker_id = header.broker_id
        epoch = header.gantry_epoch  # Gantry's group epoch; RocketMQ 4.x brokers send none (0)
        if epoch < 0:
            return request.response(ResponseCode.SYSTEM_ERROR, f"gantryEpoch {epoch} is negative")
        if not 0 <= broker_id <= MAX_BROKER_ID:
            return request.response(ResponseCode.SYSTEM_ERROR, f"brokerId {broker_id} is not within 0..{MAX_BROKER_ID}")
        crc = header.body_crc32
        if crc and body_crc32(request.body) != crc:
            return request.response(ResponseCode.SYSTEM_ERROR, "crc32 not match")
        large = len(request.body) > LARGE_REGISTRATION_BYTES  # decoded, checked and applied off the event loop
        try:
            body = await _run(large, _decoded_and_checked, request, header)
        except RegisterBodyError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"registration of {broker_name[:127]!r} refused: {exc}")
        refused = self.address_rule.refusal(broker_addr, ctx.remote_addr)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        result = await _run(
            large,
            self.route_info.register_broker,
            cluster_name,
            broker_addr,
            broker_name,
            broker_id,
            header.ha_server_addr,
            body.topic_config_wrapper,
            ctx.id,
            self.clock.monotonic(),
            body.filter_server_list,
            ctx.remote_addr,
            epoch,
        )
        answer = RegisterBrokerResponseHeader(
            ha_server_addr=result.ha_server_addr or None,
            master_addr=result.master_addr or None,
            gantry_epoch=result.epoch,
            # with a stale master's refusal: where to rejoin (a hijack refusal names none)
            gantry_slave_id=(result.next_slave_id or None) if result.refused else None,
        )
        ext = answer.encode()
        if result.refused:
            return request.response(ResponseCode.SYSTEM_ERROR, result.refused, ext_fields=ext)
        order_conf = self.kv_config.get_kv_list_by_namespace(ORDER_TOPIC_CONFIG)
        return request.response(
            ResponseCode.SUCCESS, ext_fields=ext, body=_json_body({"table": order_conf}) if order_conf else b""
        )

    async def unregister_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = UnRegisterBrokerRequestHeader.decode(request)
        refused = self.write_rule.broker_addr_refusal(request.code, header.broker_addr, ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        self.route_info.unregister_broker(header.cluster_name, header.broker_addr, header.broker_name, header.broker_id)
        return request.response(ResponseCode.SUCCESS)

    async def query_data_version(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_addr = QueryDataVersionRequestHeader.decode(request).broker_addr
        refused = self.write_rule.broker_addr_refusal(request.code, broker_addr, ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        try:
            data_version = json_compat.loads(request.body) if request.body else None
        except ValueError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"DataVersion body is not JSON: {exc}")
        changed = self.route_info.is_broker_topic_config_changed(broker_addr, data_version)
        if not changed:
            self.route_info.update_broker_info_update_timestamp(broker_addr, self.clock.monotonic())
        held = self.route_info.query_broker_data_version(broker_addr)
        body = json.dumps(held, separators=(",", ":"), sort_keys=True).encode("utf-8") if held is not None else b""
        return request.response(
            ResponseCode.SUCCESS, ext_fields=QueryDataVersionResponseHeader(changed=changed).encode(), body=body
        )

    async def broker_heartbeat(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_addr = BrokerHeartbeatRequestHeader.decode(request).broker_addr
        refused = self.write_rule.broker_addr_refusal(request.code, broker_addr, ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        self.route_info.update_broker_info_update_timestamp(broker_addr, self.clock.monotonic())
        return request.response(ResponseCode.SUCCESS)

    async def get_broker_member_group(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = GetBrokerMemberGroupRequestHeader.decode(request)
        cluster_name, broker_name = header.cluster_name, header.broker_name
        broker_data = self.route_info.get_all_cluster_info()["brokerAddrTable"].get(broker_name)
        group = {
            "brokerAddrs": broker_data["brokerAddrs"] if broker_data else {},
            "brokerName": broker_name,
            "cluster": cluster_name,
        }
        return request.response(ResponseCode.SUCCESS, body=_json_body({"brokerMemberGroup": group}))

    async def register_topic_in_namesrv(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = RegisterTopicRequestHeader.decode(request).topic
        try:
            queue_datas = check_topic_registration(topic, request.body)
        except RegisterBodyError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"registration of topic {topic[:127]!r} refused: {exc}")
        refused = self.write_rule.broker_names_refusal(request.code, [q.broker_name for q in queue_datas], ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        unknown = self.route_info.register_topic(topic, queue_datas)
        if unknown:
            return request.response(
                ResponseCode.SYSTEM_ERROR,
                f"registration of topic {topic[:127]!r} refused: broker {', '.join(unknown)} is not registered",
            )
        return request.response(ResponseCode.SUCCESS)

    # -- routes --------------------------------------------------------------------------------

    async def get_route_info_by_topic(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = GetRouteInfoRequestHeader.decode(request).topic
        route = self.route_info.pickup_topic_route_data(topic)
        if route is None:
            return request.response(
                ResponseCode.TOPIC_NOT_EXIST, f"No topic route info in name server for the topic: {topic}"
            )
        if self.order_message_enable:
            order_conf = self.kv_config.get_kv_config(ORDER_TOPIC_CONFIG, topic)
            if order_conf:
                route["orderTopicConf"] = order_conf
        return request.response(ResponseCode.SUCCESS, body=_json_body(route))

    async def get_broker_cluster_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, body=_json_body(self.route_info.get_all_cluster_info()))

    async def get_all_topic_list(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(
            ResponseCode.SUCCESS, body=_json_body({"topicList": self.route_info.get_all_topic_list()})
        )

    async def get_topics_by_cluster(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topics = self.route_info.get_topics_by_cluster(GetTopicsByClusterRequestHeader.decode(request).cluster)
        return request.response(ResponseCode.SUCCESS, body=_json_body({"topicList": topics}))

    async def delete_topic_in_namesrv(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = DeleteTopicFromNamesrvRequestHeader.decode(request)
        topic, cluster_name = header.topic, header.cluster_name
        refused = self.write_rule.broker_names_refusal(
            request.code, self.route_info.broker_names_of_topic(topic, cluster_name), ctx
        )
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        self.route_info.delete_topic(topic, cluster_name)
        return request.response(ResponseCode.SUCCESS)

    async def wipe_write_perm_of_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_name = WipeWritePermOfBrokerRequestHeader.decode(request).broker_name
        refused = self.write_rule.broker_names_refusal(request.code, [broker_name], ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        count = self.route_info.wipe_write_perm_of_broker(broker_name)
        answer = WipeWritePermOfBrokerResponseHeader(wipe_topic_count=count)
        return request.response(ResponseCode.SUCCESS, ext_fields=answer.encode())

    async def add_write_perm_of_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_name = AddWritePermOfBrokerRequestHeader.decode(request).broker_name
        refused = self.write_rule.broker_names_refusal(request.code, [broker_name], ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        count = self.route_info.add_write_perm_of_broker(broker_name)
        answer = AddWritePermOfBrokerResponseHeader(add_topic_count=count)
        return request.response(ResponseCode.SUCCESS, ext_fields=answer.encode())

    # -- KV config -----------------------------------------------------------------------------

    async def put_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = PutKVConfigRequestHeader.decode(request)
        refused = self.write_rule.operator_refusal(request.code, ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        self.kv_config.put_kv_config(header.namespace, header.key, header.value)
        return request.response(ResponseCode.SUCCESS)

    async def get_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = GetKVConfigRequestHeader.decode(request)
        namespace, key = header.namespace, header.key
        value = self.kv_config.get_kv_config(namespace, key)
        if value is None:
            return request.response(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace} Key: {key}")
        return request.response(ResponseCode.SUCCESS, ext_fields=GetKVConfigResponseHeader(value=value).encode())

    async def delete_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = DeleteKVConfigRequestHeader.decode(request)
        refused = self.write_rule.operator_refusal(request.code, ctx)
        if refused:
            return request.response(ResponseCode.SYSTEM_ERROR, refused)
        self.kv_config.delete_kv_config(header.namespace, header.key)
        return request.response(ResponseCode.SUCCESS)

    async def get_kv_list_by_namespace(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        namespace = GetKVListByNamespaceRequestHeader.decode(request).namespace
        table = self.kv_config.get_kv_list_by_namespace(namespace)
        if not table:
            return request.response(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace}")
        return request.response(ResponseCode.SUCCESS, body=_json_body({"table": table}))


# A registration body past this is decoded, checked and applied in a worker thread: one listing 65,536
# topics (10 MB) took the event loop ~0.6 s to decode and check and ~0.4 s to apply, stalling every
# other client of the name server; the route tables hold their own lock, so readers see it whole.
LARGE_REGISTRATION_BYTES = 256 * 1024

_T = TypeVar("_T")


async def _run(in_thread: bool, fn: Callable[..., _T], *args: Any) -> _T:
    return await asyncio.to_thread(fn, *args) if in_thread else fn(*args)


def _decoded_and_checked(request: RemotingCommand, header: RegisterBrokerRequestHeader) -> RegisterBrokerBody:
    body = decode_register_body(request.body, header.compressed)
    check_registration(header.broker_name, header.cluster_name, header.broker_addr, body)
    return body
