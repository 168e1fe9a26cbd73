"""``make run``: Redis, the cluster (broker-a SYNC_MASTER with a slave, broker-b alone), Celery (worker,
analytics worker, beat), a demo workload and the web server (gunicorn, after ``collectstatic``: WhiteNoise
serves the static files under hashed names, as in production), supervised in one foreground process
(Ctrl-C stops them in reverse order).

The cluster runs with the ACL on (plain TCP on loopback): on first start an admin and a demo account
with random secrets are written to ``settings.MQ["ACL_FILE"]`` (``var/acl/plain_acl.yml``, 0600 in a
0700 directory); the console, Celery and the demo get their keys through MQ_ACCESS_KEY /
MQ_SECRET_KEY and MQ_DEMO_ACCESS_KEY / MQ_DEMO_SECRET_KEY in their environment."""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from brokers.engine.acl.account_file import ensure_plain_acl_file
from brokers.engine.acl.plain_acl_config import AclConfigError
from console.file_modes import secure_var_dir, use_private_umask
from console.admin_account import login_line
from console.redis_server import READY_MARKER, private_redis_password, redis_argv
from console.supervisor import ProcessSpec, Supervisor


def web_server_argv(bind: str) -> list[str]:
    """The production web server serving the console on ``bind`` (host:port): gunicorn with console/gunicorn_conf.py."""
    return [sys.executable, "-m", "gunicorn", "-c", "python:console.gunicorn_conf", "--bind", bind, "console.wsgi"]


class Command(BaseCommand):
    help = "Run the embedded Gantry stack (redis, name server, brokers, celery, demo, web) until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--web", default="127.0.0.1:8000", help="address of the web server")
        parser.add_argument("--namesrv-port", type=int, default=9876)
        parser.add_argument(
            "--broker",
            action="append",
            default=None,
            help="NAME:PORT, repeatable (default broker-a:10911 broker-b:10921)",
        )
        parser.add_argument(
            "--slave",
            action="append",
            default=None,
            help="NAME:PORT, a slave of --broker NAME, repeatable (default with the default brokers: "
            "broker-a:10915, which makes broker-a a SYNC_MASTER; none with --broker)",
        )
        parser.add_argument("--flush", choices=["sync", "async"], default="async")
        parser.add_argument(
            "--grpc-port",
            type=int,
            default=8081,
            help="RocketMQ 5.x gRPC clients: broker-a's endpoint on this port, broker-b's on the next "
            "(default 8081, RocketMQ 5 proxy's port; 0 turns it off)",
        )
        parser.add_argument("--no-demo", action="store_true", help="do not run the demo workload")
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="echo every line of every service (default: var/log/<name>.log gets them, the "
            "terminal only warnings, errors and how to log in)",
        )

    def handle(
        self,
        *args,
        web: str,
        namesrv_port: int,
        broker: list[str] | None,
        flush: str,
        no_demo: bool,
        slave: list[str] | None = None,
        verbose: bool = False,
        **options,
    ):
        use_private_umask()  # every file the stack creates is for this user only (children inherit it)
        secure_var_dir(Path(settings.VAR_DIR))
        # hashed, compressed copies of the static files under STATIC_ROOT for WhiteNoise (only changed files are copied)
        call_command("collectstatic", interactive=False, verbosity=0)
        brokers = broker or ["broker-a:10911", "broker-b:10921"]
        # the seeds' recommended deployment: broker-a a SYNC_MASTER with one slave, broker-b alone
        slaves = slave if slave is not None else ([] if broker else ["broker-a:10915"])
        py = sys.executable
        manage = str(settings.BASE_DIR / "manage.py")
        env = {"NAMESRV_ADDR": f"127.0.0.1:{namesrv_port}", "REDIS_URL": settings.REDIS_URL, **self._acl_env()}
        celery = [py, "-m", "celery", "-A", "console"]
        specs = []
        if settings.PRIVATE_REDIS:  # no REDIS_URL: our own redis-server, data under var/redis, password in var/
            password = private_redis_password(Path(settings.VAR_DIR))
            specs.append(
                ProcessSpec(
                    "redis",
                    redis_argv(settings.PRIVATE_REDIS_PORT, Path(settings.VAR_DIR) / "redis", password),
                    ready_marker=READY_MARKER,
                )
            )
        cluster = [
            py,
            manage,
            "run_cluster",
            "--store-dir",
            settings.MQ["STORE_DIR"],
            "--namesrv-port",
            str(namesrv_port),
            "--flush",
            flush,
            "--acl-file",
            settings.MQ["ACL_FILE"],
            "--enable-property-filter",
        ]  # SQL92 subscriptions (MessageSelector.bySql) work out of the box
        grpc_port = options.get("grpc_port", 8081)
        if grpc_port:
            cluster += ["--grpc-port", str(grpc_port)]
        for b in brokers:
            cluster += ["--broker", b]
        for s in slaves:
            cluster += ["--slave", s]
        specs += [
            ProcessSpec("cluster", cluster, ready_marker="ready"),
            # rebalance triggers, health scan, metrics sampling
            ProcessSpec(
                "worker",
                [
                    *celery,
                    "worker",
                    "-Q",
                    "celery",
                    "-c",
                    "2",
                    "-n",
                    "main@%h",
                    "-l",
                    "INFO",
                    "--without-mingle",
                    "--without-gossip",
                ],
                ready_marker=" ready.",
                env=env,
            ),
            # Spark dashboard refreshes, one at a time
            ProcessSpec(
                "analytics",
                [
                    *celery,
                    "worker",
                    "-Q",
                    "analytics",
                    "-c",
                    "1",
                    "-n",
                    "analytics@%h",
                    "-l",
                    "INFO",
                    "--without-mingle",
                    "--without-gossip",
                ],
                ready_marker=" ready.",
                env=env,
            ),
            ProcessSpec(
                "beat",
                [*celery, "beat", "-l", "INFO", "-s", settings.CELERY_BEAT_SCHEDULE_FILENAME],
                ready_marker="beat: Starting",
                env=env,
            ),
        ]
        if not no_demo:
            specs.append(ProcessSpec("demo", [py, manage, "run_demo"], ready_marker="demo workload running", env=env))
        # the production web server: gunicorn (console/gunicorn_conf.py), static files by WhiteNoise
        specs.append(ProcessSpec("web", web_server_argv(web), ready_marker="Booting worker", env=env))
        url = f"http://{web}/"
        ready = [
            "",
            f"Gantry is running: open {url}",
            login_line(url) or "No admin account yet: run `python manage.py ensure_admin`.",
            f"4.x clients: name server 127.0.0.1:{namesrv_port}"
            + (f"; 5.x clients (gRPC): 127.0.0.1:{grpc_port}" if grpc_port else ""),
            "Ctrl-C stops everything.",
        ]
        code = Supervisor(
            specs, out=self.stdout._out, log_dir=Path(settings.VAR_DIR) / "log", verbose=verbose, ready_message=ready
        ).run()
        if code:
            raise CommandError("the embedded stack stopped with an error (see above)")

    def _acl_env(self) -> dict[str, str]:
        """Generate the ACL file on first start; the keys the console, Celery and the demo sign with."""
        try:
            accounts = ensure_plain_acl_file(settings.MQ["ACL_FILE"])
        except (AclConfigError, OSError) as exc:
            raise CommandError(f"ACL file: {exc}") from None
        if accounts.created:
            self.stdout.write(
                f"ACL: created {accounts.path} with accounts {accounts.admin_access_key} (admin) "
                f"and {accounts.demo_access_key} (demo); secrets are in the file"
            )
        mq = settings.MQ
        admin = (mq.get("ACCESS_KEY") or accounts.admin_access_key, mq.get("SECRET_KEY") or accounts.admin_secret_key)
        demo = (
            mq.get("DEMO_ACCESS_KEY") or accounts.demo_access_key or admin[0],
            mq.get("DEMO_SECRET_KEY") or accounts.demo_secret_key or admin[1],
        )
        return {
            "MQ_ACCESS_KEY": admin[0],
            "MQ_SECRET_KEY": admin[1],
            "MQ_DEMO_ACCESS_KEY": demo[0],
            "MQ_DEMO_SECRET_KEY": demo[1],
        }
