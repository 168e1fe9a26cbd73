"""``python manage.py mqadmin SUBCOMMAND``: RocketMQ's mqadmin, against the tier's name servers.

Subcommand names and flags are mqadmin's (``-n`` name server address, default
``settings.MQ["NAMESRV_ADDR"]``; ``-a``/``--accessKey`` and ``-s``/``--secretKey``, the ACL account every
request is signed with, default ``settings.MQ`` ACCESS_KEY / SECRET_KEY, i.e. $MQ_ACCESS_KEY /
$MQ_SECRET_KEY); see ``brokers/mqadmin/subcommands.py``. Bad arguments and
failures print a clear error and exit non-zero.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from brokers.engine.client.admin import parse_namesrv_addrs
from brokers.gateway.client import mq_tls
from brokers.mqadmin.subcommands import SUBCOMMANDS, Context, run_subcommand


class Command(BaseCommand):
    help = "RocketMQ mqadmin subcommands (clusterList, topicList, updateTopic, ...) against the name servers."

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", required=True, help=", ".join(SUBCOMMANDS))
        for name, cmd in SUBCOMMANDS.items():
            p = sub.add_parser(name, help=cmd.help, description=cmd.help)
            p.add_argument(
                "-n",
                "--namesrvAddr",
                dest="namesrv_addr",
                default=None,
                help="name server address(es), ';'-separated (default: settings.MQ NAMESRV_ADDR)",
            )
            p.add_argument(
                "-a",
                "--accessKey",
                dest="access_key",
                default=None,
                help="ACL access key to sign with (default: $MQ_ACCESS_KEY)",
            )
            p.add_argument(
                "-s", "--secretKey", dest="secret_key", default=None, help="ACL secret key (default: $MQ_SECRET_KEY)"
            )
            cmd.add_arguments(p)

    def handle(
        self,
        *args,
        subcommand: str,
        namesrv_addr: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        **options,
    ) -> None:
        addr = namesrv_addr or settings.MQ["NAMESRV_ADDR"]
        try:
            parse_namesrv_addrs(addr)
        except ValueError as exc:
            raise CommandError(f"bad -n: {exc}") from None
        access_key = access_key or settings.MQ.get("ACCESS_KEY") or None
        secret_key = secret_key or settings.MQ.get("SECRET_KEY") or None
        if bool(access_key) != bool(secret_key):
            raise CommandError("give both -a/--accessKey and -s/--secretKey (or $MQ_ACCESS_KEY and $MQ_SECRET_KEY)")
        try:
            tls = mq_tls()
        except ValueError as exc:
            raise CommandError(f"MQ_TLS_*: {exc}") from None
        ctx = Context(
            addr,
            float(settings.MQ.get("ADMIN_TIMEOUT_S", 3.0)),
            self.stdout.write,
            access_key=access_key,
            secret_key=secret_key,
            tls=tls,
        )
        run_subcommand(subcommand, options, ctx)
