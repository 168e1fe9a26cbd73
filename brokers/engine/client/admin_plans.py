"""AdminPlans: every admin call the console needs, as a plan (see :mod:`brokers.engine.client.plan`).

Each operation builds its request headers, yields the calls and parses the replies; it never
does I/O itself, so :class:`~brokers.engine.client.admin.MQAdminClient` (asyncio) and
:class:`~brokers.engine.client.admin.BlockingMQAdminClient` share it. Illegal topic or group
names and topic configs are refused before any request leaves, with InvalidNameError /
InvalidTopicConfigError (ValueError); a non-success answer raises MQBrokerError.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.admin_bodies import (
    as_dict,
    decode_offset_msg_id,
    inflate_bodies,
    key_matches,
    load_object,
    message_queue_from_key,
    parse_cluster_info,
    parse_connections,
    parse_consumer_running_info,
    parse_kv_table,
    parse_subscription_table,
    parse_topic_config_table,
    parse_topic_list,
    parse_topic_route,
)
from brokers.engine.client.admin_types import (
    ClusterInfo,
    Connection,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    OffsetWrapper,
    ProducerConnection,
    SubscriptionData,
    TopicOffset,
    TopicRouteData,
    TopicStats,
)
from brokers.engine.client.admin_errors import BrokerSystemError, GroupNotOnline
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check, first_error
from brokers.engine.common import message_codec
from brokers.engine.common.constants import AUTO_CREATE_TOPIC_KEY_TOPIC, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_attributes import parse_attribute_modification
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_validator import validate_group, validate_topic
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.brokers import GetProducerConnectionListRequestHeader
from brokers.engine.remoting.headers.groups import (
    GetConsumerConnectionListRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumeStatsRequestHeader,
)
from brokers.engine.remoting.headers.messages import QueryMessageRequestHeader, ViewMessageRequestHeader
from brokers.engine.remoting.headers.namesrv import (
    AddWritePermOfBrokerRequestHeader,
    AddWritePermOfBrokerResponseHeader,
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    GetTopicsByClusterRequestHeader,
    PutKVConfigRequestHeader,
    WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
)
from brokers.engine.remoting.headers.topics import (
    CreateTopicRequestHeader,
    DeleteTopicFromNamesrvRequestHeader,
    DeleteTopicRequestHeader,
    GetRouteInfoRequestHeader,
    GetTopicStatsInfoRequestHeader,
)

__all__ = ["MAX_TIMESTAMP", "ORDER_TOPIC_CONFIG", "AdminPlans"]

MAX_TIMESTAMP = (1 << 63) - 1  # Long.MAX_VALUE, the open end of a QUERY_MESSAGE time range
ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"  # name server KV namespace of order-topic layouts


class AdminPlans:
    """Every admin operation as a plan (see the module docstring); no I/O, no state besides the addresses."""

    def __init__(self, namesrv_addrs: tuple[str, ...]) -> None:
        self.namesrv_addrs = namesrv_addrs

    # name server reads

    def examine_broker_cluster_info(self) -> Plan[ClusterInfo]:
        """Return clusters, broker names and broker addresses as the name server holds them."""
        reply = check(
            (yield Call(RequestCode.GET_BROKER_CLUSTER_INFO)), request_code=RequestCode.GET_BROKER_CLUSTER_INFO
        )
        return parse_cluster_info(reply.body)

    def get_all_topic_list(self) -> Plan[list[str]]:
        """Return every topic the name server routes (system, retry and DLQ topics included), sorted."""
        reply = check(
            (yield Call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)),
            request_code=RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
        )
        return parse_topic_list(reply.body)

    def get_topics_by_cluster(self, cluster: str) -> Plan[list[str]]:
        """Return the topics with queues on any broker of ``cluster``, sorted."""
        reply = check(
            (yield Call(RequestCode.GET_TOPICS_BY_CLUSTER, GetTopicsByClusterRequestHeader(cluster=cluster).encode())),
            request_code=RequestCode.GET_TOPICS_BY_CLUSTER,
        )
        return parse_topic_list(reply.body)

    def examine_topic_route_info(self, topic: str) -> Plan[TopicRouteData]:
        """Return the topic's route; MQBrokerError TOPIC_NOT_EXIST when the name server has none."""
        validate_topic(topic)
        reply = check(
            (yield Call(RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic).encode())),
            request_code=RequestCode.GET_ROUTEINFO_BY_TOPIC,
        )
        return parse_topic_route(topic, reply.body)

    def _route_or_none(self, topic: str) -> Plan[TopicRouteData | None]:
        try:
            return (yield from self.examine_topic_route_info(topic))
        except MQBrokerError as exc:
            if exc.code == ResponseCode.TOPIC_NOT_EXIST:
                return None
            raise

    def _group_broker_addrs(self, group: str, topic: str | None = None) -> Plan[list[str]]:
        """Brokers that may know a group: its retry topic's route, the topic's route, else every master
        (one address per broker name: the master, else a slave)."""
        brokers = yield from self._group_brokers(group, topic)
        return [a for a, chosen in brokers.items() if chosen]

    def _group_brokers(self, group: str, topic: str | None = None) -> Plan[dict[str, bool]]:
        """Every address of the brokers of :meth:`_group_broker_addrs`, slaves included; True for the
        one address per broker name it returns (those come first)."""
        chosen: dict[str, bool] = {}
        others: dict[str, bool] = {}
        for t in (RETRY_GROUP_TOPIC_PREFIX + group, topic):
            if t is None:
                continue
            route = yield from self._route_or_none(t)
            if route is not None:
                chosen.update((a, True) for a in (b.select_broker_addr() for b in route.broker_datas) if a)
                others.update((a, False) for b in route.broker_datas for _id, a in sorted(b.broker_addrs.items()))
        if not chosen:
            info = yield from self.examine_broker_cluster_info()
            chosen.update((a, True) for a in info.master_addrs())
            others.update(
                (a, False) for _name, members in sorted(info.slaves().items()) for _id, a in sorted(members.items())
            )
        return {**chosen, **{a: False for a in others if a not in chosen}}

    # broker reads

    def get_broker_runtime_info(self, addr: str) -> Plan[dict[str, str]]:
        """Return the broker's runtime figures (GET_BROKER_RUNTIME_INFO KV table)."""
        reply = check(
            (yield Call(RequestCode.GET_BROKER_RUNTIME_INFO, addr=addr)),
            request_code=RequestCode.GET_BROKER_RUNTIME_INFO,
        )
        return parse_kv_table(reply.body)

    def get_all_topic_config(self, broker_addr: str) -> Plan[dict[str, TopicConfig]]:
        """Return the broker's topic configs by topic name (its topics.json content)."""
        reply = check(
            (yield Call(RequestCode.GET_ALL_TOPIC_CONFIG, addr=broker_addr)),
            request_code=RequestCode.GET_ALL_TOPIC_CONFIG,
        )
        return parse_topic_config_table(reply.body)

    def examine_topic_stats(self, topic: str) -> Plan[TopicStats]:
        """Return min/max offset and last update time of every queue of the topic on every broker of its route."""
        route = yield from self.examine_topic_route_info(topic)
        ext = GetTopicStatsInfoRequestHeader(topic=topic).encode()
        calls = tuple(
            Call(RequestCode.GET_TOPIC_STATS_INFO, ext, addr=a)
            for a in (b.select_broker_addr() for b in route.broker_datas)
            if a
        )
        replies = yield Fanout(calls)
        first_error(replies, RequestCode.GET_TOPIC_STATS_INFO)
        table: dict[MessageQueue, TopicOffset] = {}
        for reply in replies:
            for key, value in as_dict(load_object(reply.body).get("offsetTable")).items():
                v = as_dict(value)
                table[message_queue_from_key(key)] = TopicOffset(
                    int(v.get("minOffset", 0)), int(v.get("maxOffset", 0)), int(v.get("lastUpdateTimestamp", 0))
                )
        return TopicStats(topic, dict(sorted(table.items())))

    def examine_consume_stats(self, group: str, topic: str | None = None) -> Plan[ConsumeStats]:
        """Return the group's broker offset, consumer offset and last timestamp per queue, and its TPS."""
        validate_group(group)
        addrs = yield from self._group_broker_addrs(group, topic)
        ext = GetConsumeStatsRequestHeader(consumer_group=group, topic=topic).encode()
        replies = yield Fanout(tuple(Call(RequestCode.GET_CONSUME_STATS, ext, addr=a) for a in addrs))
        table: dict[MessageQueue, OffsetWrapper] = {}
        tps = 0.0
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:
            first_error(replies, RequestCode.GET_CONSUME_STATS)
        for reply in answered:
            obj = load_object(reply.body)
            tps += float(obj.get("consumeTps", 0) or 0)
            for key, value in as_dict(obj.get("offsetTable")).items():
                v = as_dict(value)
                mq = message_queue_from_key(key)
                if topic is None or mq.topic == topic:
                    table[mq] = OffsetWrapper(
                        int(v.get("brokerOffset", 0)), int(v.get("consumerOffset", 0)), int(v.get("lastTimestamp", 0))
                    )
        return ConsumeStats(group, topic, dict(sorted(table.items())), tps)

    def examine_consumer_connection_info(self, group: str) -> Plan[ConsumerConnection]:
        """Return the group's live connections and subscriptions, merged over its brokers, slaves
        included: a master that has just come back knows only the clients that have heartbeated it
        since, and while it is down only its slaves know them.

        MQBrokerError CONSUMER_NOT_ONLINE when no broker has a connection of the group.
        """
        validate_group(group)
        brokers = yield from self._group_brokers(group)
        addrs = list(brokers)
        ext = GetConsumerConnectionListRequestHeader(consumer_group=group).encode()
        replies = yield Fanout(tuple(Call(RequestCode.GET_CONSUMER_CONNECTION_LIST, ext, addr=a) for a in addrs))
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:  # a slave that does not answer does not make an offline group an error
            errors = [
                r
                for a, r in zip(addrs, replies)
                if brokers[a] and not (isinstance(r, Reply) and r.code == ResponseCode.CONSUMER_NOT_ONLINE)
            ]
            first_error(errors, RequestCode.GET_CONSUMER_CONNECTION_LIST)
            raise GroupNotOnline(
                ResponseCode.CONSUMER_NOT_ONLINE,
                f"the consumer group [{group}] not online",
                request_code=RequestCode.GET_CONSUMER_CONNECTION_LIST,
            )
        conns: dict[str, Connection] = {}  # one per client id: a client has a connection to each broker
        subs: dict[str, SubscriptionData] = {}
        consume_type = message_model = from_where = None
        for reply in answered:
            obj = load_object(reply.body)
            for c in parse_connections(obj):
                conns.setdefault(c.client_id, c)
            subs.update(parse_subscription_table(obj.get("subscriptionTable") or {}))
            consume_type = consume_type or obj.get("consumeType")
            message_model = message_model or obj.get("messageModel")
            from_where = from_where or obj.get("consumeFromWhere")
        return ConsumerConnection(
            tuple(sorted(conns.values(), key=lambda c: c.client_id)),
            dict(sorted(subs.items())),
            consume_type,
            message_model,
            from_where,
        )

    def examine_producer_connection_info(self, group: str, topic: str) -> Plan[ProducerConnection]:
        """Return the producer group's live connections on the brokers of ``topic``."""
        validate_group(group)
        route = yield from self.examine_topic_route_info(topic)
        addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
        ext = GetProducerConnectionListRequestHeader(producer_group=group).encode()
        replies = yield Fanout(tuple(Call(RequestCode.GET_PRODUCER_CONNECTION_LIST, ext, addr=a) for a in addrs))
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:
            first_error(replies, RequestCode.GET_PRODUCER_CONNECTION_LIST)
        conns: dict[str, Connection] = {}
        for reply in answered:
            for c in parse_connections(load_object(reply.body)):
                conns.setdefault(c.client_id, c)
        return ProducerConnection(tuple(sorted(conns.values(), key=lambda c: c.client_id)))

    def get_consumer_running_info(self, group: str, client_id: str, jstack: bool = False) -> Plan[ConsumerRunningInfo]:
        """Ask a consumer client, through a broker it is connected to, for its running info."""
        validate_group(group)
        addrs = yield from self._group_broker_addrs(group)
        last: RemotingError | None = None
        ext = GetConsumerRunningInfoRequestHeader(consumer_group=group, client_id=client_id, jstack_enable=jstack)
        for addr in addrs:
            try:
                reply = yield Call(
                    RequestCode.GET_CONSUMER_RUNNING_INFO,
                    ext.encode(),
                    addr=addr,
                    timeout_s=12.0,  # the broker waits up to 10 s for the client
                )
                check(reply, request_code=RequestCode.GET_CONSUMER_RUNNING_INFO)
            except RemotingError as exc:
                last = exc
                continue
            return parse_consumer_running_info(reply.body)
        raise last or MQClientError(CLIENT_ERROR, f"no broker to ask for consumer group {group}")

    def query_message_by_key(
        self,
        topic: str,
        key: str,
        max_num: int = 32,
        begin_ts: int = 0,
        end_ts: int = MAX_TIMESTAMP,
        *,
        unique_key: bool = False,
    ) -> Plan[list[MessageExt]]:
        """Return the messages of ``topic`` whose KEYS (or UNIQ_KEY) hold ``key``, from every broker of its route."""
        route = yield from self.examine_topic_route_info(topic)
        ext = QueryMessageRequestHeader(
            topic=topic,
            key=key,
            max_num=max_num,
            begin_timestamp=begin_ts,
            end_timestamp=end_ts,
            unique_key_query=unique_key,
        ).encode()
        addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
        replies = yield Fanout(tuple(Call(RequestCode.QUERY_MESSAGE, ext, addr=a) for a in addrs))
        first_error(replies, RequestCode.QUERY_MESSAGE, ResponseCode.QUERY_NOT_FOUND)
        found: dict[str, MessageExt] = {}
        for reply in replies:
            if reply.code == ResponseCode.SUCCESS and reply.body:
                for msg in inflate_bodies(message_codec.decode_records(reply.body)):
                    if key_matches(msg, topic, key):
                        found.setdefault(msg.msg_id or f"{msg.store_host}/{msg.commit_log_offset}", msg)
        return sorted(found.values(), key=lambda m: (m.store_timestamp, m.msg_id))

    def view_message(self, offset_msg_id: str) -> Plan[MessageExt]:
        """Return the message of an offset message id, asking the store host encoded in the id."""
        addr, offset = decode_offset_msg_id(offset_msg_id)
        reply = check(
            (yield Call(RequestCode.VIEW_MESSAGE_BY_ID, ViewMessageRequestHeader(offset=offset).encode(), addr=addr)),
            request_code=RequestCode.VIEW_MESSAGE_BY_ID,
        )
        records = inflate_bodies(message_codec.decode_records(reply.body))
        if not records:
            raise BrokerSystemError(ResponseCode.SYSTEM_ERROR, f"empty body for message {offset_msg_id}", addr=addr)
        return records[0]

    # writes

    def create_or_update_topic(
        self, broker_addr: str, config: TopicConfig, attributes: str | None = None
    ) -> Plan[None]:
        """Create or update the topic on one broker (which re-registers with the name servers).

        ``attributes`` is RocketMQ 5's modification text (``+message.type=FIFO,-key``, see
        ``common/topic_attributes.py``), checked here first; None leaves the topic's attributes as they are.
        """
        validate_topic(config.topic_name)
        config.validate()
        if attributes is not None:
            parse_attribute_modification(attributes)  # InvalidAttributeError before anything is sent
        header = CreateTopicRequestHeader(
            topic=config.topic_name,
            default_topic=AUTO_CREATE_TOPIC_KEY_TOPIC,
            read_queue_nums=config.read_queue_nums,
            write_queue_nums=config.write_queue_nums,
            perm=config.perm,
            topic_filter_type=config.topic_filter_type,
            topic_sys_flag=config.topic_sys_flag,
            order=config.order,
            attributes=attributes,
        )
        check(
            (yield Call(RequestCode.UPDATE_AND_CREATE_TOPIC, header.encode(), addr=broker_addr)),
            request_code=RequestCode.UPDATE_AND_CREATE_TOPIC,
        )

    def create_or_update_topic_in_cluster(
        self, cluster: str, config: TopicConfig, attributes: str | None = None
    ) -> Plan[list[str]]:
        """Create or update the topic on every master of ``cluster``; return their addresses."""
        validate_topic(config.topic_name)
        config.validate()
        info = yield from self.examine_broker_cluster_info()
        if cluster not in info.clusters:
            raise MQClientError(
                CLIENT_ERROR,
                f"cluster {cluster!r} is not known to the name server (known: {', '.join(sorted(info.clusters)) or 'none'})",
            )
        addrs = info.master_addrs(cluster)
        if not addrs:
            raise MQClientError(CLIENT_ERROR, f"cluster {cluster!r} has no master broker")
        for addr in addrs:
            yield from self.create_or_update_topic(addr, config, attributes)
        if config.order:
            conf = ";".join(f"{name}:{config.write_queue_nums}" for name in info.masters(cluster))
            yield from self.put_kv_config(ORDER_TOPIC_CONFIG, config.topic_name, conf)
        return addrs

    def put_kv_config(self, namespace: str, key: str, value: str) -> Plan[None]:
        """Store a KV config entry on every name server."""
        ext = PutKVConfigRequestHeader(namespace=namespace, key=key, value=value).encode()
        replies = yield Fanout(tuple(Call(RequestCode.PUT_KV_CONFIG, ext, addr=a) for a in self.namesrv_addrs))
        first_error(replies, RequestCode.PUT_KV_CONFIG)

    def get_kv_config(self, namespace: str, key: str) -> Plan[str | None]:
        """Return a name server KV config value, None when absent."""
        reply = yield Call(RequestCode.GET_KV_CONFIG, GetKVConfigRequestHeader(namespace=namespace, key=key).encode())
        if reply.code == ResponseCode.QUERY_NOT_FOUND:
            return None
        return GetKVConfigResponseHeader.decode(check(reply, request_code=RequestCode.GET_KV_CONFIG).ext).value

    def delete_topic(
        self, topic: str, cluster: str | None = None, broker_addrs: str | Iterable[str] | None = None
    ) -> Plan[list[str]]:
        """Delete the topic on brokers (those given, the masters of ``cluster``, or those of its route), then on every name server.

        Returns the broker addresses it was deleted on.
        """
        validate_topic(topic)
        if broker_addrs is not None:
            addrs = [broker_addrs] if isinstance(broker_addrs, str) else list(broker_addrs)
        elif cluster is not None:
            info = yield from self.examine_broker_cluster_info()
            if cluster not in info.clusters:
                raise MQClientError(CLIENT_ERROR, f"cluster {cluster!r} is not known to the name server")
            addrs = info.master_addrs(cluster)
        else:
            route = yield from self._route_or_none(topic)
            addrs = [a for a in (b.master_addr for b in route.broker_datas) if a] if route else []
        ext = DeleteTopicRequestHeader(topic=topic).encode()
        replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_BROKER, ext, addr=a) for a in addrs))
        first_error(replies, RequestCode.DELETE_TOPIC_IN_BROKER)
        ext = DeleteTopicFromNamesrvRequestHeader(topic=topic, cluster_name=cluster).encode()
        replies = yield Fanout(
            tuple(Call(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext, addr=a) for a in self.namesrv_addrs)
        )
        if not any(isinstance(r, Reply) and r.code == ResponseCode.SUCCESS for r in replies):
            first_error(replies, RequestCode.DELETE_TOPIC_IN_NAMESRV)
        return addrs

    def wipe_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> Plan[int]:
        """Clear the WRITE bit of the broker's queue data on one name server; return the topics touched."""
        ext = WipeWritePermOfBrokerRequestHeader(broker_name=broker_name).encode()
        reply = check(
            (yield Call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, ext, addr=namesrv_addr)),
            request_code=RequestCode.WIPE_WRITE_PERM_OF_BROKER,
        )
        return WipeWritePermOfBrokerResponseHeader.decode(reply.ext).wipe_topic_count

    def add_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> Plan[int]:
        """Give the broker's queue data READ|WRITE on one name server; return the topics touched."""
        ext = AddWritePermOfBrokerRequestHeader(broker_name=broker_name).encode()
        reply = check(
            (yield Call(RequestCode.ADD_WRITE_PERM_OF_BROKER, ext, addr=namesrv_addr)),
            request_code=RequestCode.ADD_WRITE_PERM_OF_BROKER,
        )
        return AddWritePermOfBrokerResponseHeader.decode(reply.ext).add_topic_count
