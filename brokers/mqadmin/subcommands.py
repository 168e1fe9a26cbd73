"""The mqadmin subcommands: RocketMQ's names, flags and printouts, over the blocking clients.

Each subcommand validates its arguments (names with ``brokers.engine.common.topic_validator``) before
any request leaves, and raises CommandError with a readable message for every failure.
"""

from __future__ import annotations

import abc
import argparse
import time
from typing import Protocol

from django.core.management.base import CommandError

from brokers.engine.client.admin import ConsumerConnection, MQClientError, TopicRouteData
from brokers.engine.client.simple import TOOLS_CONSUMER_GROUP, PullClient, PullStatus
from brokers.engine.common import json_compat
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.mq_version import version_desc
from brokers.engine.common.topic_attributes import InvalidAttributeError, parse_attribute_modification
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_validator import InvalidNameError, broker_system_topics, validate_new_topic
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.mqadmin import output
from brokers.mqadmin.arguments import bool_value, group_name, non_negative, perm_value, queue_nums, topic_name
from brokers.mqadmin.context import Context
from brokers.mqadmin.gantry_subcommands import GANTRY_SUBCOMMANDS
from brokers.mqadmin.store_subcommands import STORE_SUBCOMMANDS
from brokers.mqadmin.subgroup_subcommands import SUBGROUP_SUBCOMMANDS

MQADMIN_PRODUCER_GROUP = "SELF_TEST_P_GROUP"  # the producer group mqadmin sendMessage uses
PULL_BATCH = 32  # messages per pull in consumeMessage


# -- subcommands ----------------------------------------------------------------------------------


class Subcommand(abc.ABC):
    """One mqadmin subcommand: its name, help, arguments and what it runs."""

    name = ""
    help = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        pass

    @abc.abstractmethod
    def run(self, ctx: Context, opts: dict) -> None:
        """Run with the parsed options; raise CommandError to exit non-zero with a message."""


class Runnable(Protocol):
    """What the command uses of a subcommand: a Subcommand here, or one of another module's (duck-typed)."""

    name: str
    help: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, ctx: Context, opts: dict) -> None: ...


class ClusterList(Subcommand):
    name, help = "clusterList", "List the clusters and their brokers with runtime figures"
    _FMT = "{:<16}  {:<22}  {:<4}  {:<22} {:<16} {:>19} {:>19} {:>10} {:>5} {:>6}"

    def run(self, ctx: Context, opts: dict) -> None:
        info = ctx.admin.examine_broker_cluster_info()
        ctx.write(
            self._FMT.format(
                "#Cluster Name",
                "#Broker Name",
                "#BID",
                "#Addr",
                "#Version",
                "#InTPS(LOAD)",
                "#OutTPS(LOAD)",
                "#PCWait(ms)",
                "#Hour",
                "#SPACE",
            )
        )
        for broker in info.brokers:
            try:
                rt = ctx.admin.get_broker_runtime_info(broker.addr)
            except RemotingError:
                rt = {}
            in_tps = _first_float(rt.get("putTps"))
            out_tps = _first_float(rt.get("getTransferedTps"))
            earliest = _int(rt.get("earliestMessageTimeStamp"))
            hour = (time.time() * 1000 - earliest) / 3_600_000 if earliest > 0 else 0.0
            ctx.write(
                self._FMT.format(
                    broker.cluster,
                    broker.broker_name,
                    broker.broker_id,
                    broker.addr,
                    rt.get("brokerVersionDesc", ""),
                    f"{in_tps:9.2f}({rt.get('sendThreadPoolQueueSize', 0)},{rt.get('sendThreadPoolQueueHeadWaitTimeMills', 0)}ms)",
                    f"{out_tps:9.2f}({rt.get('pullThreadPoolQueueSize', 0)},{rt.get('pullThreadPoolQueueHeadWaitTimeMills', 0)}ms)",
                    rt.get("pageCacheLockTimeMills", 0),
                    f"{hour:2.2f}",
                    f"{_first_float(rt.get('commitLogDiskRatio')):.4f}",
                )
            )


class TopicList(Subcommand):
    name, help = "topicList", "List every topic the name server routes"

    def run(self, ctx: Context, opts: dict) -> None:
        for topic in ctx.admin.get_all_topic_list():
            ctx.write(topic)


class TopicRoute(Subcommand):
    name, help = "topicRoute", "Print the route of a topic"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")

    def run(self, ctx: Context, opts: dict) -> None:
        route = ctx.admin.examine_topic_route_info(opts["topic"])
        ctx.write(json_compat.dumps(_route_json(route), pretty=True))


class TopicStatus(Subcommand):
    name, help = "topicStatus", "Print min/max offsets of every queue of a topic"
    _FMT = "{:<32}  {:<4}  {:<20}  {:<20}    {}"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")

    def run(self, ctx: Context, opts: dict) -> None:
        stats = ctx.admin.examine_topic_stats(opts["topic"])
        ctx.write(self._FMT.format("#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated"))
        for mq, offset in stats.items():
            ctx.write(
                self._FMT.format(
                    mq.broker_name,
                    mq.queue_id,
                    offset.min_offset,
                    offset.max_offset,
                    output.human_time_ms(offset.last_update_timestamp),
                )
            )


class UpdateTopic(Subcommand):
    name, help = "updateTopic", "Create or update a topic on a broker (-b) or on every master of a cluster (-c)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("-b", "--brokerAddr", dest="broker_addr", help="create the topic on this broker address")
        where.add_argument(
            "-c", "--clusterName", dest="cluster", help="create the topic on every master of this cluster"
        )
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")
        parser.add_argument(
            "-r", "--readQueueNums", dest="read_queue_nums", type=queue_nums, default=8, help="read queues (default 8)"
        )
        parser.add_argument(
            "-w",
            "--writeQueueNums",
            dest="write_queue_nums",
            type=queue_nums,
            default=8,
            help="write queues (default 8)",
        )
        parser.add_argument(
            "-p", "--perm", dest="perm", type=perm_value, default=6, help="permission: 2 W, 4 R, 6 RW (default 6)"
        )
        parser.add_argument(
            "-o", "--order", dest="order", type=bool_value, default=False, help="order topic: true or false"
        )
        # Apache's tool spells it -a too; here -a is the access key of every subcommand
        parser.add_argument(
            "--attributes",
            dest="attributes",
            default=None,
            help="RocketMQ 5 topic attributes: +key=value to set, -key to remove, e.g. +message.type=FIFO",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        try:
            parse_attribute_modification(opts["attributes"])
        except InvalidAttributeError as exc:
            raise CommandError(f"illegal attributes: {exc}") from None
        try:
            validate_new_topic(opts["topic"])
            if opts["cluster"]:  # refuse a broker's own names before any broker of the cluster writes
                info = ctx.admin.examine_broker_cluster_info()
                validate_new_topic(opts["topic"], broker_system_topics(info.clusters, info.broker_datas))
        except InvalidNameError as exc:
            raise CommandError(f"illegal topic name: {exc}") from None
        config = TopicConfig(
            opts["topic"], opts["read_queue_nums"], opts["write_queue_nums"], opts["perm"], order=opts["order"]
        ).validate()
        if opts["broker_addr"]:
            ctx.admin.create_or_update_topic(opts["broker_addr"], config, opts["attributes"])
            addrs = [opts["broker_addr"]]
        else:
            addrs = ctx.admin.create_or_update_topic_in_cluster(opts["cluster"], config, opts["attributes"])
        for addr in addrs:
            ctx.write(f"create topic to {addr} success.")
        ctx.write(output.topic_config_string(config))


class DeleteTopic(Subcommand):
    name, help = "deleteTopic", "Delete a topic from the brokers of a cluster and from the name servers"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")
        parser.add_argument(
            "-c",
            "--clusterName",
            dest="cluster",
            default=None,
            help="cluster (default: the brokers of the topic's route)",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        topic, cluster = opts["topic"], opts["cluster"]
        try:
            validate_new_topic(topic)
        except InvalidNameError as exc:
            raise CommandError(f"illegal topic name: {exc}") from None
        ctx.admin.delete_topic(topic, cluster=cluster)
        ctx.write(f"delete topic [{topic}] from cluster [{cluster or 'its brokers'}] success.")
        ctx.write(f"delete topic [{topic}] from NameServer success.")


class ConsumerProgress(Subcommand):
    name, help = "consumerProgress", "Print a consumer group's progress per queue (or every group's summary)"
    _FMT = "{:<64}  {:<32}  {:<4}  {:<20}  {:<20}  {:<20} {}"
    _ALL_FMT = "{:<64}  {:<6}  {:<24} {:<5}  {:<14}  {:<7}  {}"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-g", "--groupName", dest="group", type=group_name, default=None, help="consumer group")
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, default=None, help="only this topic")

    def run(self, ctx: Context, opts: dict) -> None:
        if opts["group"] is None:
            return self._all_groups(ctx)
        stats = ctx.admin.examine_consume_stats(opts["group"], opts["topic"])
        if not stats.offset_table:  # RocketMQ's admin refuses an empty table (CONSUMER_NOT_ONLINE), naming no group
            where = f" on topic [{opts['topic']}]" if opts["topic"] else ""
            raise CommandError(
                f"consumer group [{opts['group']}]{where}: not found the consumer group consume stats, because "
                "return offset table is empty, maybe the consumer not consume any message"
            )
        ctx.write(
            self._FMT.format(
                "#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime"
            )
        )
        for mq, w in stats.items():
            ctx.write(
                self._FMT.format(
                    mq.topic,
                    mq.broker_name,
                    mq.queue_id,
                    w.broker_offset,
                    w.consumer_offset,
                    w.diff,
                    output.date_time(w.last_timestamp),
                )
            )
        ctx.write("")
        ctx.write(f"Consume TPS: {stats.consume_tps:.2f}")
        ctx.write(f"Consume Diff Total: {stats.diff_total}")

    def _all_groups(self, ctx: Context) -> None:
        groups = sorted(
            t[len(RETRY_GROUP_TOPIC_PREFIX) :]
            for t in ctx.admin.get_all_topic_list()
            if t.startswith(RETRY_GROUP_TOPIC_PREFIX)
        )
        ctx.write(self._ALL_FMT.format("#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total"))
        for group in groups:
            try:
                stats = ctx.admin.examine_consume_stats(group)
            except RemotingError:
                continue
            conn: ConsumerConnection | None
            try:
                conn = ctx.admin.examine_consumer_connection_info(group)
            except RemotingError:
                conn = None
            count = len(conn.connections) if conn else 0
            version = version_desc(conn.connections[0].version) if conn and conn.connections else "OFFLINE"
            kind = (
                {"CONSUME_ACTIVELY": "PULL", "CONSUME_PASSIVELY": "PUSH"}.get(conn.consume_type or "", "")
                if conn
                else ""
            )
            model = (conn.message_model or "") if conn else ""
            ctx.write(
                self._ALL_FMT.format(group, count, version, kind, model, f"{stats.consume_tps:.0f}", stats.diff_total)
            )


class ConsumerConnectionCmd(Subcommand):
    name, help = "consumerConnection", "Print the connections and subscriptions of a consumer group"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "-g", "--consumerGroup", dest="group", type=group_name, required=True, help="consumer group"
        )

    def run(self, ctx: Context, opts: dict) -> None:
        cc = ctx.admin.examine_consumer_connection_info(opts["group"])
        for i, c in enumerate(cc.connections, 1):
            ctx.write(f"{i:03d}  {c.client_id:<32} {c.client_addr:<22} {c.language:<8} {version_desc(c.version)}")
        ctx.write("")
        ctx.write("Below is subscription:")
        for i, sub in enumerate(cc.subscription_table.values(), 1):
            ctx.write(f"{i:03d}  Topic: {sub.topic:<40} SubExpression: {sub.sub_string}")
        ctx.write("")
        ctx.write(f"ConsumeType: {cc.consume_type}")
        ctx.write(f"MessageModel: {cc.message_model}")
        ctx.write(f"ConsumeFromWhere: {cc.consume_from_where}")


class QueryMsgByKey(Subcommand):
    name, help = "queryMsgByKey", "Find messages of a topic by key"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")
        parser.add_argument("-k", "--msgKey", dest="key", required=True, help="message key")

    def run(self, ctx: Context, opts: dict) -> None:
        if not opts["key"].strip():
            raise CommandError("the key is empty")
        msgs = ctx.admin.query_message_by_key(opts["topic"], opts["key"].strip())
        ctx.write(f"{'#Message ID':<50} {'#QID':>4} {'#Offset':>40}")
        for m in msgs:
            ctx.write(f"{output.display_msg_id(m):<50} {m.queue_id:>4} {m.queue_offset:>40}")


class QueryMsgById(Subcommand):
    name, help = "queryMsgById", "Print a message by its offset message id (or UNIQ_KEY with -t)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-i", "--msgId", dest="msg_id", required=True, help="message id(s), comma-separated")
        parser.add_argument(
            "-t", "--topic", dest="topic", type=topic_name, default=None, help="topic, to look up a UNIQ_KEY id"
        )

    def run(self, ctx: Context, opts: dict) -> None:
        ids = [i.strip() for i in opts["msg_id"].split(",") if i.strip()]
        if not ids:
            raise CommandError("no message id given")
        for msg_id in ids:
            try:
                msgs = [ctx.admin.view_message(msg_id)]
            except RemotingError as exc:
                if opts["topic"] is None:
                    raise
                msgs = ctx.admin.query_message_by_key(opts["topic"], msg_id, unique_key=True)
                if not msgs:
                    raise CommandError(f"message {msg_id} not found: {exc}") from None
            for msg in msgs:
                for line in output.message_details(msg):
                    ctx.write(line)
                ctx.write("")


class SendMessage(Subcommand):
    name, help = "sendMessage", "Send one message"
    _FMT = "{:<32}  {:<4}  {:<20}    {}"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")
        parser.add_argument("-p", "--body", dest="body", required=True, help="message body (UTF-8)")
        parser.add_argument("-k", "--key", dest="keys", default=None, help="message keys")
        parser.add_argument("-c", "--tags", dest="tags", default=None, help="message tag")
        parser.add_argument("-b", "--broker", dest="broker_name", default=None, help="send to this broker name")
        parser.add_argument(
            "-i", "--qid", dest="queue_id", type=non_negative, default=None, help="send to this queue id (needs -b)"
        )

    def run(self, ctx: Context, opts: dict) -> None:
        if opts["queue_id"] is not None and not opts["broker_name"]:
            raise CommandError("-i (queue id) needs -b (broker name)")
        body = opts["body"].encode("utf-8")
        if not body:
            raise CommandError("the message body is empty")
        msg = Message(opts["topic"], body, tags=opts["tags"] or None, keys=opts["keys"] or None)
        producer = ctx.producer(MQADMIN_PRODUCER_GROUP)
        mq = None
        if opts["broker_name"]:
            queues = [
                q for q in producer.fetch_publish_message_queues(opts["topic"]) if q.broker_name == opts["broker_name"]
            ]
            if not queues:
                raise CommandError(f"broker {opts['broker_name']!r} has no writable queue of topic {opts['topic']!r}")
            if opts["queue_id"] is not None:
                mq = MessageQueue(opts["topic"], opts["broker_name"], opts["queue_id"])
                if mq not in queues:
                    raise CommandError(
                        f"queue {opts['queue_id']} is not a writable queue of {opts['topic']!r} on {opts['broker_name']!r}"
                    )
            else:
                mq = queues[0]
        result = producer.send(msg, mq)
        ctx.write(self._FMT.format("#Broker Name", "#QID", "#Send Result", "#MsgId"))
        ctx.write(
            self._FMT.format(
                result.message_queue.broker_name, result.message_queue.queue_id, result.status.value, result.msg_id
            )
        )


class ConsumeMessage(Subcommand):
    name, help = "consumeMessage", "Pull and print messages of a topic (or of one queue)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-t", "--topic", dest="topic", type=topic_name, required=True, help="topic name")
        parser.add_argument("-b", "--brokerName", dest="broker_name", default=None, help="only this broker")
        parser.add_argument(
            "-i", "--queueId", dest="queue_id", type=non_negative, default=None, help="only this queue (needs -b)"
        )
        parser.add_argument(
            "-o",
            "--offset",
            dest="offset",
            type=non_negative,
            default=None,
            help="start offset (default: the queue's min offset)",
        )
        parser.add_argument(
            "-g", "--consumerGroup", dest="group", type=group_name, default=TOOLS_CONSUMER_GROUP, help="consumer group"
        )
        parser.add_argument(
            "-c",
            "--MessageNumber",
            dest="count",
            type=non_negative,
            default=128,
            help="messages to print at most (default 128)",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        if opts["queue_id"] is not None and not opts["broker_name"]:
            raise CommandError("-i (queue id) needs -b (broker name)")
        puller = ctx.puller(opts["group"])
        queues = puller.fetch_subscribe_message_queues(opts["topic"])
        if opts["broker_name"]:
            queues = [q for q in queues if q.broker_name == opts["broker_name"]]
        if opts["queue_id"] is not None:
            queues = [q for q in queues if q.queue_id == opts["queue_id"]]
        if not queues:
            raise CommandError(f"no readable queue of topic {opts['topic']!r} matches the given broker/queue")
        remaining = opts["count"]
        for mq in queues:
            if remaining <= 0:
                break
            remaining -= self._consume_queue(ctx, puller, mq, opts["offset"], remaining)
        ctx.write(f"Consume ok, {opts['count'] - remaining} message(s)")

    @staticmethod
    def _consume_queue(ctx: Context, puller: PullClient, mq: MessageQueue, start: int | None, limit: int) -> int:
        offset = start if start is not None else puller.min_offset(mq)
        max_offset = puller.max_offset(mq)
        printed = 0
        while printed < limit and offset < max_offset:
            result = puller.pull(mq, offset, min(PULL_BATCH, limit - printed))
            for msg in result.messages[: limit - printed]:
                ctx.write(output.message_line(msg))
                printed += 1
            if result.status is PullStatus.NO_NEW_MSG or result.next_begin_offset <= offset:
                break
            offset = result.next_begin_offset
        return printed


SUBCOMMANDS: dict[str, Runnable] = {
    cmd.name: cmd
    for cmd in (
        ClusterList(),
        TopicList(),
        TopicRoute(),
        TopicStatus(),
        UpdateTopic(),
        DeleteTopic(),
        ConsumerProgress(),
        ConsumerConnectionCmd(),
        QueryMsgByKey(),
        QueryMsgById(),
        SendMessage(),
        ConsumeMessage(),
        *STORE_SUBCOMMANDS,
        *SUBGROUP_SUBCOMMANDS,
        *GANTRY_SUBCOMMANDS,
    )
}


def run_subcommand(name: str, opts: dict, ctx: Context) -> None:
    """Run one subcommand; turn engine and validation errors into CommandError."""
    try:
        SUBCOMMANDS[name].run(ctx, opts)
    except MQClientError as exc:
        if exc.code == ResponseCode.TOPIC_NOT_EXIST and opts.get("topic"):
            raise CommandError(f"topic {opts['topic']!r} does not exist ({exc})") from None
        raise CommandError(str(exc)) from None
    except RemotingError as exc:
        raise CommandError(f"{exc} (name server: {ctx.namesrv_addr})") from None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    finally:
        ctx.close()


# -- helpers --------------------------------------------------------------------------------------


def _route_json(route: TopicRouteData) -> dict:
    """The route as fastjson prints TopicRouteData (broker ids as bare number keys)."""
    data = route.to_json()
    data["brokerDatas"] = [
        {**b.to_json(), "brokerAddrs": dict(sorted(b.broker_addrs.items()))} for b in route.broker_datas
    ]
    return data


def _first_float(value: str | None) -> float:
    try:
        return float(str(value).split()[0]) if value else 0.0
    except (ValueError, IndexError):
        return 0.0


def _int(value: str | None) -> int:
    try:
        return int(value) if value else 0
    except ValueError:
        return 0


__all__ = ["Context", "SUBCOMMANDS", "run_subcommand"]
