"""The name server's request handlers: request code -> RouteInfoManager / KvConfigManager.

Served codes: REGISTER_BROKER (103), UNREGISTER_BROKER (104), GET_ROUTEINFO_BY_TOPIC (105),
GET_BROKER_CLUSTER_INFO (106), WIPE_WRITE_PERM_OF_BROKER (205),
GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206), DELETE_TOPIC_IN_NAMESRV (216), GET_TOPICS_BY_CLUSTER
(224), QUERY_DATA_VERSION (322), ADD_WRITE_PERM_OF_BROKER (327) and the KV config codes 100, 101,
102, 219.  Every other code is answered REQUEST_CODE_NOT_SUPPORTED (the 4.9.8 Java name server
stays silent instead, leaving the caller to time out).

REGISTER_BROKER takes Gantry's optional ``gantryEpoch`` header field (the broker's group epoch)
and answers ``gantryEpoch`` (the broker name's highest); a broker id 0 registering a lower
epoch than its group's master is answered SYSTEM_ERROR "stale epoch N < M; the master of NAME
is now ADDR" with ``masterAddr``, ``haServerAddr``, ``gantryEpoch`` and ``gantrySlaveId`` (the
id to rejoin the group with) and changes no route (``route_info.py``).

Route and cluster bodies are written as standard JSON (quoted broker-id keys, sorted, non-ASCII
escaped) whatever the client's version: Java clients read it through fastjson, eval-style
JavaScript clients through JSON2, and strict JSON parsers (Go, Python) need it.  A missing required header field
raises RemotingCommandError, which the server answers SYSTEM_ERROR with a remark naming it.
"""
from __future__ import annotations

import json

from brokers.engine.common import json_compat
from brokers.engine.common.clock import Clock
from brokers.engine.namesrv.kv_config import ORDER_TOPIC_CONFIG, KvConfigManager
from brokers.engine.namesrv.register_body import RegisterBodyError, body_crc32, decode_register_body
from brokers.engine.namesrv.route_info import RouteInfoManager
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.server import RemotingServer


def _json_body(value: object) -> bytes:
    return json_compat.dumps_standard(value).encode("utf-8")


class NamesrvProcessor:
    """Handlers for every code the name server serves; ``register(server)`` installs them."""

    def __init__(self, route_info: RouteInfoManager, kv_config: KvConfigManager, clock: Clock, *, order_message_enable: bool = False) -> None:
        self.route_info = route_info
        self.kv_config = kv_config
        self.clock = clock
        self.order_message_enable = order_message_enable

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
        }
        for code, handler in handlers.items():
            server.register_processor(code, handler)

    # -- brokers -------------------------------------------------------------------------------

    async def register_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_name = request.require_str("brokerName")
        broker_addr = request.require_str("brokerAddr")
        cluster_name = request.require_str("clusterName")
        ha_server_addr = request.ext("haServerAddr") or ""
        broker_id = request.require_int("brokerId")
        epoch = request.get_int("gantryEpoch", 0) or 0  # Gantry's group epoch; RocketMQ 4.x brokers send none
        if epoch < 0:
            return request.response(ResponseCode.SYSTEM_ERROR, f"gantryEpoch {epoch} is negative")
        crc = request.get_int("bodyCrc32", 0)
        if crc and body_crc32(request.body) != crc:
            return request.response(ResponseCode.SYSTEM_ERROR, "crc32 not match")
        try:
            body = decode_register_body(request.body, request.get_bool("compressed"))
        except RegisterBodyError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        result = self.route_info.register_broker(
            cluster_name,
            broker_addr,
            broker_name,
            broker_id,
            ha_server_addr,
            body.topic_config_wrapper,
            ctx.id,
            self.clock.monotonic(),
            body.filter_server_list,
            ctx.remote_addr,
            epoch,
        )
        ext = {"haServerAddr": result.ha_server_addr or None, "masterAddr": result.master_addr or None,
               "gantryEpoch": result.epoch}
        if result.refused:
            ext["gantrySlaveId"] = result.next_slave_id
            return request.response(ResponseCode.SYSTEM_ERROR, result.refused, ext_fields=ext)
        order_conf = self.kv_config.get_kv_list_by_namespace(ORDER_TOPIC_CONFIG)
        return request.response(ResponseCode.SUCCESS, ext_fields=ext, body=_json_body({"table": order_conf}) if order_conf else b"")

    async def unregister_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        self.route_info.unregister_broker(
            request.require_str("clusterName"),
            request.require_str("brokerAddr"),
            request.require_str("brokerName"),
            request.require_int("brokerId"),
        )
        return request.response(ResponseCode.SUCCESS)

    async def query_data_version(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker_addr = request.require_str("brokerAddr")
        try:
            data_version = json_compat.loads(request.body) if request.body else None
        except ValueError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"DataVersion body is not JSON: {exc}")
        changed = self.route_info.is_broker_topic_config_changed(broker_addr, data_version)
        if not changed:
            self.route_info.update_broker_info_update_timestamp(broker_addr, self.clock.monotonic())
        held = self.route_info.query_broker_data_version(broker_addr)
        body = json.dumps(held, separators=(",", ":"), sort_keys=True).encode("utf-8") if held is not None else b""
        return request.response(ResponseCode.SUCCESS, ext_fields={"changed": changed}, body=body)

    # -- routes --------------------------------------------------------------------------------

    async def get_route_info_by_topic(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = request.require_str("topic")
        route = self.route_info.pickup_topic_route_data(topic)
        if route is None:
            return request.response(ResponseCode.TOPIC_NOT_EXIST, f"No topic route info in name server for the topic: {topic}")
        if self.order_message_enable:
            order_conf = self.kv_config.get_kv_config(ORDER_TOPIC_CONFIG, topic)
            if order_conf:
                route["orderTopicConf"] = order_conf
        return request.response(ResponseCode.SUCCESS, body=_json_body(route))

    async def get_broker_cluster_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, body=_json_body(self.route_info.get_all_cluster_info()))

    async def get_all_topic_list(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, body=_json_body({"topicList": self.route_info.get_all_topic_list()}))

    async def get_topics_by_cluster(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topics = self.route_info.get_topics_by_cluster(request.require_str("cluster"))
        return request.response(ResponseCode.SUCCESS, body=_json_body({"topicList": topics}))

    async def delete_topic_in_namesrv(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        self.route_info.delete_topic(request.require_str("topic"), request.ext("clusterName"))
        return request.response(ResponseCode.SUCCESS)

    async def wipe_write_perm_of_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        count = self.route_info.wipe_write_perm_of_broker(request.require_str("brokerName"))
        return request.response(ResponseCode.SUCCESS, ext_fields={"wipeTopicCount": count})

    async def add_write_perm_of_broker(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        count = self.route_info.add_write_perm_of_broker(request.require_str("brokerName"))
        return request.response(ResponseCode.SUCCESS, ext_fields={"addTopicCount": count})

    # -- KV config -----------------------------------------------------------------------------

    async def put_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        self.kv_config.put_kv_config(request.require_str("namespace"), request.require_str("key"), request.require_str("value"))
        return request.response(ResponseCode.SUCCESS)

    async def get_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        namespace, key = request.require_str("namespace"), request.require_str("key")
        value = self.kv_config.get_kv_config(namespace, key)
        if value is None:
            return request.response(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace} Key: {key}")
        return request.response(ResponseCode.SUCCESS, ext_fields={"value": value})

    async def delete_kv_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        self.kv_config.delete_kv_config(request.require_str("namespace"), request.require_str("key"))
        return request.response(ResponseCode.SUCCESS)

    async def get_kv_list_by_namespace(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        namespace = request.require_str("namespace")
        table = self.kv_config.get_kv_list_by_namespace(namespace)
        if not table:
            return request.response(ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {namespace}")
        return request.response(ResponseCode.SUCCESS, body=_json_body({"table": table}))
