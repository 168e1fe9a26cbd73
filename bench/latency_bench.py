"""How long Gantry takes to answer when it must answer at once or after a set wait: the figures
the tests used to assert in seconds (tests assert the behaviour only; see docs/benchmarks.md).

- remoting: an invoke with a 0.2 s timeout on a server that never answers (async client), a 0.3 s
  timeout on a handler that answers after 5 s (blocking client), and a fast request sent on a
  connection while a 1 s request is pending;
- long polling (a broker in this process): a parked pull woken by a message, a 0.6 s hold on an
  empty queue, a 60 s hold asked of a broker capping holds at 0.8 s;
- name server (subprocesses): a broker registering every 0.3 s with a 1.5 s expiry is frozen
  (SIGSTOP); time until its route is gone;
- console (Django in this process, SQLite in a temporary directory): queueing a task, triggering a
  rebalance and a dashboard refresh while Redis is down, a rebalance while the name server is down.

    .venv/bin/python bench/latency_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from processes import ClusterSpec, ProcessCluster, free_port  # noqa: E402

from brokers.engine.cluster import EngineCluster, GroupSpec  # noqa: E402
from brokers.engine.common.message import properties_to_string  # noqa: E402
from brokers.engine.remoting.blocking import BlockingRemotingClient  # noqa: E402
from brokers.engine.remoting.client import RemotingClient  # noqa: E402
from brokers.engine.remoting.codes import RequestCode, ResponseCode  # noqa: E402
from brokers.engine.remoting.command import RemotingCommand  # noqa: E402
from brokers.engine.remoting.errors import RemotingTimeoutError  # noqa: E402
from brokers.engine.remoting.server import RemotingServer  # noqa: E402

ECHO, SLOW = 3001, 3002
ROWS: list[tuple[str, str, list[float]]] = []


def row(name: str, expected: str, seconds: list[float]) -> None:
    ROWS.append((name, expected, seconds))
    print(f"{name}: median {statistics.median(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms", flush=True)


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


async def atimed(coro) -> float:
    started = time.perf_counter()
    await coro
    return time.perf_counter() - started


# -- remoting ---------------------------------------------------------------------------------------


async def _remoting(runs: int) -> None:
    async def echo(ctx, request):
        return request.response(ResponseCode.SUCCESS)

    async def slow(ctx, request):
        await asyncio.sleep(float(request.ext("delay")))
        return request.response(ResponseCode.SUCCESS)

    server = RemotingServer()
    server.register_processor(ECHO, echo)
    server.register_processor(SLOW, slow)
    await server.start()
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    silent_addr = f"127.0.0.1:{silent.sockets[0].getsockname()[1]}"
    addr = f"127.0.0.1:{server.port}"
    client = RemotingClient()
    try:

        async def times_out() -> None:
            try:
                await client.invoke(silent_addr, RemotingCommand.request(ECHO), 0.2)
            except RemotingTimeoutError:
                return
            raise AssertionError("answered")

        row(
            "async invoke, 0.2 s timeout, silent server: raised after",
            "0.2 s",
            [await atimed(times_out()) for _ in range(runs)],
        )
        fast: list[float] = []
        for _ in range(runs):
            pending = asyncio.ensure_future(client.invoke(addr, RemotingCommand.request(SLOW, {"delay": 1.0}), 5.0))
            await asyncio.sleep(0.05)
            fast.append(await atimed(client.invoke(addr, RemotingCommand.request(ECHO), 5.0)))
            assert not pending.done()
            await pending
        row("fast request while a 1 s one is pending on the connection", "< 0.5 s", fast)

        def blocking_timeout() -> None:
            with BlockingRemotingClient() as blocking:
                try:
                    blocking.invoke(addr, RemotingCommand.request(SLOW, {"delay": 5}), 0.3)
                except RemotingTimeoutError:
                    return
                raise AssertionError("answered")

        loop = asyncio.get_running_loop()
        row(
            "blocking invoke, 0.3 s timeout, handler answering after 5 s: raised after",
            "0.3 s",
            [await loop.run_in_executor(None, timed, blocking_timeout) for _ in range(runs)],
        )
    finally:
        await client.close()
        silent.close()
        await server.stop()


# -- long polling -----------------------------------------------------------------------------------


async def _long_polling(tmp: Path, runs: int) -> None:
    cluster = await EngineCluster(
        ClusterSpec(
            str(tmp),
            groups=(GroupSpec("broker-a"),),
            broker_overrides={"max_suspend_ms": 800},
            store_overrides={"commitlog_file_size": 1 << 20},
        )
    ).start()
    broker = cluster.brokers["broker-a"]
    client = RemotingClient()

    def call(code: int, ext: dict, body: bytes = b"", timeout: float = 70.0):
        return client.invoke(broker.addr, RemotingCommand.request(code, ext, body), timeout)

    def pull(topic: str, offset: int, suspend_ms: int):
        return call(
            RequestCode.PULL_MESSAGE,
            {
                "consumerGroup": "bench",
                "topic": topic,
                "queueId": 0,
                "queueOffset": offset,
                "maxMsgNums": 32,
                "sysFlag": 0x4 | 0x2,
                "commitOffset": 0,
                "suspendTimeoutMillis": suspend_ms,
                "subVersion": 0,
                "subscription": "*",
                "expressionType": "TAG",
            },
        )

    def send(topic: str):
        return call(
            RequestCode.SEND_MESSAGE,
            {
                "producerGroup": "bench",
                "topic": topic,
                "defaultTopic": "TBW102",
                "defaultTopicQueueNums": 1,
                "queueId": 0,
                "sysFlag": 0,
                "bornTimestamp": 0,
                "flag": 0,
                "properties": properties_to_string({}),
                "reconsumeTimes": 0,
                "unitMode": False,
            },
            b"wake up",
            5.0,
        )

    try:
        topic = "LatencyBench"
        created = await call(
            RequestCode.UPDATE_AND_CREATE_TOPIC,
            {
                "topic": topic,
                "defaultTopic": "TBW102",
                "readQueueNums": 1,
                "writeQueueNums": 1,
                "perm": 6,
                "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0,
                "order": False,
            },
        )
        assert created.code == ResponseCode.SUCCESS, created
        woken: list[float] = []
        for offset in range(runs):
            parked = asyncio.ensure_future(pull(topic, offset, 15_000))
            while broker.pull_request_hold_service.parked_count != 1:
                await asyncio.sleep(0.005)
            started = time.perf_counter()
            assert (await send(topic)).code == ResponseCode.SUCCESS
            assert (await parked).code == ResponseCode.SUCCESS
            woken.append(time.perf_counter() - started)
        row("parked pull (15 s hold): answered after the message was sent", "at once", woken)
        row(
            "pull held 0.6 s on an empty queue: answered after",
            "0.6 s",
            [await atimed(pull(topic, runs, 600)) for _ in range(runs)],
        )
        row(
            "pull asking a 60 s hold of a broker capping at 0.8 s: answered after",
            "0.8 s",
            [await atimed(pull(topic, runs, 60_000)) for _ in range(runs)],
        )
    finally:
        await client.close()
        await cluster.stop()


# -- name server expiry -----------------------------------------------------------------------------


def _namesrv_expiry(tmp: Path, runs: int) -> None:
    from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
    from brokers.engine.common.topic_config import TopicConfig

    cluster = ProcessCluster(
        ClusterSpec(
            str(tmp / "expiry"),
            groups=(GroupSpec("broker-x"),),
            broker_overrides={"register_interval_s": 0.3},
            namesrv_overrides={"scan_not_active_broker_interval_s": 0.1, "broker_channel_expired_s": 1.5},
        ),
        log_level="INFO",
    ).start()
    admin = BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=2.0)

    def routed() -> bool:
        try:
            return bool(admin.examine_topic_route_info("ExpiryTopic").queue_datas)
        except MQBrokerError:
            return False

    def until(predicate) -> float:
        started = time.perf_counter()
        while not predicate():
            if time.perf_counter() - started > 30:
                raise RuntimeError("condition not reached in 30 s")
            time.sleep(0.01)
        return time.perf_counter() - started

    try:
        admin.create_or_update_topic(cluster.addr("broker-x"), TopicConfig("ExpiryTopic", 2, 2))
        gone: list[float] = []
        for _ in range(runs):
            until(routed)
            time.sleep(0.5)  # a few registrations in
            cluster.signal_broker("broker-x", signal.SIGSTOP)
            gone.append(until(lambda: not routed()))
            cluster.signal_broker("broker-x", signal.SIGCONT)
        row("broker frozen (registering every 0.3 s, expiry 1.5 s): route gone after", "1.2-1.6 s", gone)
    finally:
        admin.close()
        cluster.signal_broker("broker-x", signal.SIGCONT)
        cluster.stop()


# -- console ----------------------------------------------------------------------------------------


def _console(tmp: Path, runs: int) -> None:
    cluster = ProcessCluster(ClusterSpec(str(tmp / "console-cluster"), groups=(GroupSpec("broker-a"),))).start()
    namesrv = cluster.namesrv_addr
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "GANTRY_VAR_DIR": str(tmp / "var"),
            "NAMESRV_ADDR": namesrv,
            "DATABASE_URL": f"sqlite:///{tmp / 'console.sqlite3'}",
            "ALLOWED_HOSTS": "testserver",
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    logging.disable(logging.WARNING)  # every refused request logs a warning: noise here
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from brokers.gateway.client import reset_admin_client
    from brokers.engine.client.admin import BlockingMQAdminClient
    from brokers.engine.client.simple import PullClient
    from brokers.engine.common.topic_config import TopicConfig
    from console.actor import Actor
    from console.celery import app
    from console.errors import QueueUnavailable
    from console.models import AccountRole
    from console.queueing import submit
    from console.roles import Role
    from console.services import api_token_create
    from console.tasks import ping_task

    down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    settings.REDIS_URL = settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = down
    app.conf.update(broker_url=down, result_backend=down)
    user = get_user_model().objects.create_user(username="bench-operator", password="x")
    AccountRole.objects.create(user=user, role="operator")
    operator = APIClient()
    operator.credentials(
        HTTP_AUTHORIZATION=f"Token {api_token_create(actor=Actor(user.username, Role('operator'), 'api'), username=user.username).token}"
    )

    with BlockingMQAdminClient(namesrv) as admin:
        admin.create_or_update_topic(cluster.addr("broker-a"), TopicConfig("BenchFailFast", 4, 4))
        while not admin.examine_topic_route_info("BenchFailFast").queue_datas:
            time.sleep(0.1)
    member = PullClient(namesrv, "G_bench", instance_name="m1", heartbeat_interval_s=None)
    member.subscribe("BenchFailFast")
    try:

        def refused_submit() -> None:
            try:
                submit(ping_task, kwargs={})
            except QueueUnavailable:
                return
            raise AssertionError("queued")

        def post(url: str, code: int, body: dict | None = None):
            def once() -> None:
                response = operator.post(url, body or {}, format="json")
                assert response.status_code == code, response.content

            return once

        row("queueing a task, Redis down: refused after", "< 1 s", [timed(refused_submit) for _ in range(runs)])
        row(
            "POST /api/v1/groups/G/rebalance, Redis down: 503 after",
            "< 1 s",
            [timed(post("/api/v1/groups/G_bench/rebalance", 503, {"dry_run": False})) for _ in range(runs)],
        )
        row(
            "POST /api/v1/dashboards/refresh, Redis down: 503 after",
            "< 1.5 s",
            [timed(post("/api/v1/dashboards/refresh", 503)) for _ in range(runs)],
        )
        settings.MQ = {**settings.MQ, "NAMESRV_ADDR": f"127.0.0.1:{free_port()}", "ADMIN_TIMEOUT_S": 2.0}
        reset_admin_client()
        row(
            "POST /api/v1/groups/G/rebalance, name server down: 503 after",
            "< 1 s",
            [timed(post("/api/v1/groups/G_anything/rebalance", 503, {"dry_run": False})) for _ in range(runs)],
        )
    finally:
        member.close()
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, "
        f"load {open('/proc/loadavg').read().split()[:3]}, {args.runs} runs each",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="gantry-latency-") as name:
        tmp = Path(name)
        asyncio.run(_remoting(args.runs))
        asyncio.run(_long_polling(tmp, args.runs))
        _namesrv_expiry(tmp, args.runs)
        _console(tmp, args.runs)
    print("\n| what | expected | median (ms) | max (ms) |\n|---|---|---:|---:|")
    for name, expected, seconds in ROWS:
        print(f"| {name} | {expected} | {statistics.median(seconds) * 1000:.1f} | {max(seconds) * 1000:.1f} |")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
