"""``make run``: the cluster, then the web server, supervised in one foreground process."""
from __future__ import annotations

import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console.supervisor import ProcessSpec, Supervisor


class Command(BaseCommand):
    help = "Run the embedded Gantry stack (name server, brokers, web) until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--web", default="127.0.0.1:8000", help="address of the web server")
        parser.add_argument("--namesrv-port", type=int, default=9876)
        parser.add_argument("--broker", action="append", default=None,
                            help="NAME:PORT, repeatable (default broker-a:10911 broker-b:10921)")
        parser.add_argument("--flush", choices=["sync", "async"], default="async")

    def handle(self, *args, web: str, namesrv_port: int, broker: list[str] | None, flush: str, **options):
        brokers = broker or ["broker-a:10911", "broker-b:10921"]
        py = sys.executable
        manage = str(settings.BASE_DIR / "manage.py")
        cluster = [py, manage, "run_cluster", "--store-dir", settings.MQ["STORE_DIR"],
                   "--namesrv-port", str(namesrv_port), "--flush", flush]
        for b in brokers:
            cluster += ["--broker", b]
        specs = [
            ProcessSpec("cluster", cluster, ready_marker="ready"),
            ProcessSpec("web", [py, manage, "runserver", web, "--noreload", "--insecure"],
                        ready_marker="Quit the server",
                        env={"NAMESRV_ADDR": f"127.0.0.1:{namesrv_port}"}),
        ]
        code = Supervisor(specs, out=self.stdout._out).run()
        if code:
            raise CommandError("the embedded stack stopped with an error (see above)")
