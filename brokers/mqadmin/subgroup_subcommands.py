"""mqadmin updateSubGroup / deleteSubGroup: RocketMQ's flags and printouts, over the subscription group plans.

``updateSubGroup (-b brokerAddr | -c clusterName) -g group [--consumeEnable] [-m consumeFromMinEnable]
[-d consumeBroadcastEnable] [-o consumeMessageOrderly] [-q retryQueueNums] [-r retryMaxTimes] [-i brokerId]
[-w whichBrokerWhenConsumeSlowly] [--notifyConsumerIdsChanged]`` (RocketMQ's ``-s`` and ``-a`` are
Gantry's ``--secretKey`` and ``--accessKey`` on every subcommand: those two take their long
names only, which RocketMQ's accepts too). As RocketMQ's, a setting left out
takes its default (the broker replaces the whole entry). ``deleteSubGroup (-b | -c) -g group
[-r [true|false]]``: ``-r`` also removes the group's committed offsets. The config is checked before
any request leaves.
"""

from __future__ import annotations

import argparse

from django.core.management.base import CommandError

from brokers.engine.client.admin_subscription_groups import (
    SubscriptionGroupConfig,
    delete_subscription_group,
    update_subscription_group,
)
from brokers.engine.common.subscription_group_config import InvalidSubscriptionGroupError
from brokers.engine.common import json_compat
from brokers.mqadmin.arguments import bool_value, group_name
from brokers.mqadmin.context import Context


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None


def _where(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("-b", "--brokerAddr", dest="broker_addr", help="this broker address only")
    where.add_argument("-c", "--clusterName", dest="cluster", help="every master of this cluster")
    parser.add_argument("-g", "--groupName", dest="group", type=group_name, required=True, help="consumer group name")


def _addrs(ctx: Context, opts: dict) -> list[str]:
    if opts["broker_addr"]:
        return [opts["broker_addr"]]
    info = ctx.admin.examine_broker_cluster_info()
    if opts["cluster"] not in info.clusters:
        raise CommandError(
            f"cluster {opts['cluster']!r} is not known to the name server (known: {', '.join(sorted(info.clusters)) or 'none'})"
        )
    addrs = info.master_addrs(opts["cluster"])
    if not addrs:
        raise CommandError(f"cluster {opts['cluster']!r} has no master broker")
    return addrs


# flag, long name, option key (SubscriptionGroupConfig field), type
_SETTINGS = (
    (None, "--consumeEnable", "consume_enable", bool_value),  # RocketMQ's -s: Gantry's mqadmin has -s for --secretKey
    ("-m", "--consumeFromMinEnable", "consume_from_min_enable", bool_value),
    ("-d", "--consumeBroadcastEnable", "consume_broadcast_enable", bool_value),
    ("-o", "--consumeMessageOrderly", "consume_message_orderly", bool_value),  # RocketMQ 5: a FIFO group (orderly pops)
    ("-q", "--retryQueueNums", "retry_queue_nums", _integer),
    ("-r", "--retryMaxTimes", "retry_max_times", _integer),
    ("-i", "--brokerId", "broker_id", _integer),
    ("-w", "--whichBrokerWhenConsumeSlowly", "which_broker_when_consume_slowly", _integer),
    (
        None,
        "--notifyConsumerIdsChanged",
        "notify_consumer_ids_changed_enable",
        bool_value,
    ),  # RocketMQ's -a: here --accessKey
)


class UpdateSubGroup:
    name, help = (
        "updateSubGroup",
        "Create or update a subscription group on a broker (-b) or on every master of a cluster (-c)",
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        _where(parser)
        for flag, long, key, kind in _SETTINGS:
            parser.add_argument(
                *(f for f in (flag, long) if f),
                dest=key,
                type=kind,
                default=None,
                help=f"{long[2:]} (default: RocketMQ's)",
            )

    def run(self, ctx: Context, opts: dict) -> None:
        given = {key: opts[key] for _, _, key, _ in _SETTINGS if opts.get(key) is not None}
        try:
            config = SubscriptionGroupConfig(opts["group"], **given).validate()
        except InvalidSubscriptionGroupError as exc:
            raise CommandError(f"illegal subscription group config: {exc}") from None
        for addr in _addrs(ctx, opts):
            ctx.admin.driver.run(update_subscription_group(addr, config))
            ctx.write(f"create subscription group to {addr} success.")
        ctx.write(json_compat.dumps(config.to_json()))


class DeleteSubGroup:
    name, help = (
        "deleteSubGroup",
        "Delete a subscription group from a broker (-b) or from every master of a cluster (-c)",
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        _where(parser)
        parser.add_argument(
            "-r",
            "--removeOffset",
            dest="remove_offset",
            type=bool_value,
            nargs="?",
            const=True,
            default=False,
            help="also remove the group's committed offsets (true or false; -r alone: true)",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        for addr in _addrs(ctx, opts):
            ctx.admin.driver.run(delete_subscription_group(addr, opts["group"], opts["remove_offset"]))
            where = f" in cluster [{opts['cluster']}]" if opts["cluster"] else ""
            ctx.write(f"delete subscription group [{opts['group']}] from broker [{addr}]{where} success.")


SUBGROUP_SUBCOMMANDS = (UpdateSubGroup(), DeleteSubGroup())
