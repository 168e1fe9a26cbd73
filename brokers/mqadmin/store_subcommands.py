"""mqadmin's store maintenance subcommands, RocketMQ's names and flags.

``deleteExpiredCommitLog [-b brokerAddr | -c cluster]`` (request 329): every broker addressed
deletes its expired commit log segments now, whatever its ``deleteWhen`` hour, and keeps doing so
on its next 20 clean passes. ``cleanExpiredCQ [-b brokerAddr | -c cluster]`` (request 306): every
broker addressed deletes consume queue and index files whose messages are gone. Without ``-b``
the request goes to every broker (masters and slaves) of the cluster, or of every cluster without
``-c``, as RocketMQ's DefaultMQAdminExt does. One line per broker says what its pass deleted, then
RocketMQ's ``success``; a broker that refuses ends the command with an error.
"""

from __future__ import annotations

import argparse

from django.core.management.base import CommandError

from brokers.engine.client.admin_store import clean_expired_consume_queue, delete_expired_commit_log
from brokers.mqadmin.context import Context


class _StoreClean:
    name = help = ""
    plan = staticmethod(delete_expired_commit_log)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        where = parser.add_mutually_exclusive_group()
        where.add_argument(
            "-b", "--brokerAddr", dest="broker_addr", default=None, help="one broker's address (HOST:PORT)"
        )
        where.add_argument(
            "-c",
            "--cluster",
            dest="cluster",
            default=None,
            help="every broker of this cluster (default: of every cluster)",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        addrs = (
            [opts["broker_addr"].strip()] if opts.get("broker_addr") else self._cluster_addrs(ctx, opts.get("cluster"))
        )
        for addr in addrs:
            ctx.write(ctx.admin.driver.run(self.plan(addr)).describe())
        ctx.write("success")

    @staticmethod
    def _cluster_addrs(ctx: Context, cluster: str | None) -> list[str]:
        info = ctx.admin.examine_broker_cluster_info()
        cluster = cluster.strip() if cluster else None
        if cluster is not None and cluster not in info.clusters:
            raise CommandError(
                f"cluster {cluster!r} is not known to the name servers (known: {', '.join(sorted(info.clusters)) or 'none'})"
            )
        addrs = [b.addr for b in info.brokers if cluster is None or b.cluster == cluster]
        if not addrs:
            raise CommandError("no broker to ask: the name servers know none")
        return addrs


class DeleteExpiredCommitLog(_StoreClean):
    name, help = "deleteExpiredCommitLog", "Delete expired CommitLog files."
    plan = staticmethod(delete_expired_commit_log)


class CleanExpiredCQ(_StoreClean):
    name, help = "cleanExpiredCQ", "Clean expired ConsumeQueue on broker."
    plan = staticmethod(clean_expired_consume_queue)


STORE_SUBCOMMANDS = (DeleteExpiredCommitLog(), CleanExpiredCQ())
