"""Gantry's own mqadmin subcommands (RocketMQ's mqadmin has no online promotion; its 4.x way is a restart).

``promoteSlave -b broker-a -i 1 [--dry-run] [--force] [--role SYNC_MASTER|ASYNC_MASTER]`` asks the
slave with id ``-i`` of broker group ``-b`` to become its master (GANTRY_PROMOTE_SLAVE, request code
10004) and prints the candidate's answer: for ``--dry-run`` what the promotion would do and lose and
why a real run would be refused, if it would. The broker name and id are checked against the name
servers' cluster info before any request leaves; a refusal or a broker without promotion ends with
a clear error and a non-zero exit.
"""

from __future__ import annotations

import argparse

from django.core.management.base import CommandError

from brokers.engine.client.admin_promotion import PROMOTION_ROLES, PromotionResult, promote_slave
from brokers.mqadmin.arguments import broker_name
from brokers.mqadmin.context import Context


def _slave_id(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"broker id {value!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"broker id {number} is not a slave's (a slave has id >= 1; 0 is the master)")
    return number


class PromoteSlave:
    name, help = "promoteSlave", "Gantry: promote a slave of a broker group to master, online (--dry-run first)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "-b",
            "--brokerName",
            dest="broker_name",
            type=broker_name,
            required=True,
            help="the broker group, e.g. broker-a",
        )
        parser.add_argument(
            "-i",
            "--brokerId",
            dest="broker_id",
            type=_slave_id,
            required=True,
            help="the slave to promote (its brokerId)",
        )
        parser.add_argument(
            "--dry-run", dest="dry_run", action="store_true", help="only print what the promotion would do and lose"
        )
        parser.add_argument(
            "--force",
            dest="force",
            action="store_true",
            help="promote even when the slave lacks acknowledged data or its master is alive",
        )
        parser.add_argument(
            "--role",
            dest="role",
            choices=PROMOTION_ROLES,
            default=None,
            help="the role it takes (default: its master's)",
        )

    def run(self, ctx: Context, opts: dict) -> None:
        name, broker_id = opts["broker_name"], opts["broker_id"]
        data = ctx.admin.examine_broker_cluster_info().broker_datas.get(name)
        if data is None:
            raise CommandError(f"broker {name} is not known to the name servers")
        addr = data.broker_addrs.get(broker_id)
        if addr is None:
            members = ", ".join(f"{bid} {a}" for bid, a in sorted(data.broker_addrs.items()))
            raise CommandError(f"{name} has no broker with id {broker_id} (its members: {members})")
        result = ctx.admin.driver.run(
            promote_slave(addr, name, broker_id, force=opts["force"], dry_run=opts["dry_run"], role=opts["role"])
        )
        for line in result_lines(result):
            ctx.write(line)
        where = f"{name} id {broker_id} ({addr})"
        if result.dry_run:
            ctx.write(
                f"dry run: the promotion of {where} would be refused: {result.refused}"
                if result.refused
                else f"dry run: {where} can be promoted to {result.to_role}"
            )
        elif result.promoted:
            ctx.write(f"promote {where} to {result.to_role} under group epoch {result.new_epoch} success.")
        else:
            raise CommandError(f"{where} was not promoted: {result.refused or 'the broker did not say why'}")


def result_lines(result: PromotionResult) -> list[str]:
    """The candidate's answer, one ``key: value`` line per field of the contract's JSON."""
    return [
        f"{key:<22}{str(value).lower() if isinstance(value, bool) else value}"
        for key, value in result.to_json().items()
    ]


GANTRY_SUBCOMMANDS = (PromoteSlave(),)
