"""Server time of the console's topic list (2,000 topics) and group list (1,000 groups) on two brokers.

The name server and brokers broker-a, broker-b run as subprocesses (`python -m brokers.engine`),
their topic tables written before start (config/topics.json), so setting up 2,000 topics costs
nothing. Django runs in this process (SQLite in a temporary directory); each request goes through
Django's test client, so the time is everything the server does for it: middleware, session,
the admin calls, filtering, template or serializer, not the network to a browser.

Goal: under 300 ms, with one batched admin call per broker, never one per row. The script counts
the admin requests of each page and fails when a list makes more than its budget:

- topics: GET_ALL_TOPIC_CONFIG once per broker;
- groups (1,000 groups, each with offsets on one of --consumed-topics topics, their configs and
  offsets in subscriptionGroup.json / consumerOffset.json before start): GET_BROKER_CONSUME_STATS
  (every group's offsets, lag and TPS), GET_ALL_SUBSCRIPTIONGROUP_CONFIG (every group's
  consumeEnable) and GANTRY_GET_ALL_CONSUMER_CONNECTIONS (Gantry's extension:
  every online group's members) once per broker, whatever the number of rows shown, plus at most
  two GET_BROKER_CLUSTER_INFO, and nothing else. (Against Apache RocketMQ brokers, which answer
  the extension "not supported", the console falls back to GET_CONSUMER_CONNECTION_LIST per group
  shown and broker; this bench runs Gantry brokers only.)

    .venv/bin/python bench/console_bench.py [--topics 2000] [--groups 1000] [--consumed-topics 100] [--runs 30]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402

from brokers.engine.common.gc_freeze import freeze_startup_heap  # noqa: E402

BROKERS = ("broker-a", "broker-b")
CLUSTER = "BenchCluster"


def _write_groups(store_dir: Path, groups: int, consumed_topics: int) -> None:
    """config/subscriptionGroup.json and consumerOffset.json: ``groups`` groups, each with committed
    offsets on the 8 queues of one of the first ``consumed_topics`` topics."""
    table = {
        f"BenchGroup_{i:05d}": {
            "groupName": f"BenchGroup_{i:05d}",
            "consumeEnable": True,
            "consumeFromMinEnable": True,
            "consumeBroadcastEnable": True,
            "retryQueueNums": 1,
            "retryMaxTimes": 16,
            "brokerId": 0,
            "whichBrokerWhenConsumeSlowly": 1,
            "notifyConsumerIdsChangedEnable": True,
        }
        for i in range(groups)
    }
    offsets = {
        f"Bench_{i % consumed_topics:05d}@BenchGroup_{i:05d}": {str(q): 0 for q in range(8)} for i in range(groups)
    }
    (store_dir / "config").mkdir(parents=True, exist_ok=True)
    version = {"counter": 1, "timestamp": int(time.time() * 1000)}
    (store_dir / "config" / "subscriptionGroup.json").write_text(
        json.dumps({"dataVersion": version, "subscriptionGroupTable": table})
    )
    (store_dir / "config" / "consumerOffset.json").write_text(json.dumps({"offsetTable": offsets}))


def _write_topics(store_dir: Path, topics: int) -> None:
    """A broker's config/topics.json holding ``topics`` user topics (8 queues each, perm 6)."""
    table = {
        f"Bench_{i:05d}": {
            "order": False,
            "perm": 6,
            "readQueueNums": 8,
            "topicFilterType": "SINGLE_TAG",
            "topicName": f"Bench_{i:05d}",
            "topicSysFlag": 0,
            "writeQueueNums": 8,
        }
        for i in range(topics)
    }
    (store_dir / "config").mkdir(parents=True, exist_ok=True)
    wrapper = {"dataVersion": {"counter": 1, "timestamp": int(time.time() * 1000)}, "topicConfigTable": table}
    (store_dir / "config" / "topics.json").write_text(json.dumps(wrapper))


@contextmanager
def cluster(tmp: Path, topics: int, groups: int = 0, consumed_topics: int = 100) -> Iterator[str]:
    """A name server and the BROKERS (a ProcessCluster), their stores seeded with ``topics`` topics (and
    ``groups`` groups) before they start; yields the name server address."""
    spec = ClusterSpec(str(tmp / "store"), groups=tuple(GroupSpec(name) for name in BROKERS), cluster_name=CLUSTER)
    for member in spec.members():
        store = Path(spec.store_dir(member))
        _write_topics(store, topics)
        if groups:
            _write_groups(store, groups, consumed_topics)
    with ProcessCluster(spec, log_dir=tmp) as servers:
        yield servers.namesrv_addr


def _setup_django(tmp: Path, namesrv: str) -> None:
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
    call_command("collectstatic", interactive=False, verbosity=0)  # as make run: pages link hashed static names


class RequestCounter:
    """Count the admin requests sent, by request code, through the shared client's driver."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    def install(self) -> None:
        from brokers.engine.client import driver
        from brokers.engine.remoting.codes import RequestCode

        counts = self.counts
        send_on, send = driver._send_on, driver.BlockingDriver._send

        def name(code: int) -> str:
            try:
                return RequestCode(code).name
            except ValueError:
                return str(code)

        async def counted_send_on(client, call, timeout):
            counts[name(call.code)] += 1
            return await send_on(client, call, timeout)

        def counted_send(self, call):
            counts[name(call.code)] += 1
            return send(self, call)

        driver._send_on = counted_send_on
        driver.BlockingDriver._send = counted_send


def _wait_routed(topics: int) -> None:
    from brokers.gateway.client import get_admin_client

    last = f"Bench_{topics - 1:05d}"
    deadline = time.monotonic() + 60
    why = "no answer yet"
    while True:
        try:
            routed = len(get_admin_client().examine_topic_route_info(last).queue_datas)
            if routed == len(BROKERS):
                return
            why = f"routed to {routed}"
        except Exception as exc:  # noqa: BLE001 (not there yet; the last reason is reported)
            why = f"{type(exc).__name__}: {exc}"
        if time.monotonic() > deadline:
            raise RuntimeError(f"{last} not routed to {len(BROKERS)} brokers in 60 s (last: {why})")
        time.sleep(0.1)


def _topic_budget(calls: dict) -> bool:
    return calls.get("GET_ALL_TOPIC_CONFIG", 0) <= len(BROKERS) and sum(calls.values()) <= len(BROKERS) + 2


GROUP_LIST_CALLS = (
    "GET_BROKER_CONSUME_STATS",
    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
    "GANTRY_GET_ALL_CONSUMER_CONNECTIONS",
)


def _group_budget(calls: dict) -> bool:
    """One GET_BROKER_CONSUME_STATS, one GET_ALL_SUBSCRIPTIONGROUP_CONFIG and one
    GANTRY_GET_ALL_CONSUMER_CONNECTIONS per broker, at most two
    GET_BROKER_CLUSTER_INFO, nothing else (no fallback: the bench's brokers serve both)."""
    return (
        all(calls.get(code, 0) <= len(BROKERS) for code in GROUP_LIST_CALLS)
        and calls.get("GET_BROKER_CLUSTER_INFO", 0) <= 2
        and set(calls) <= {*GROUP_LIST_CALLS, "GET_BROKER_CLUSTER_INFO"}
    )


def measure(runs: int, topics: int, groups: int = 0, consumed_topics: int = 100) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from console.models import AccountRole

    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    AccountRole.objects.create(user=user, role="viewer")
    client = Client()
    client.force_login(user)
    counter = RequestCounter()
    counter.install()
    scenarios = [
        ("page /topics/ (first 100 rows)", "/topics/", {}, _topic_budget),
        ("page /topics/?q=Bench_019 (search)", "/topics/", {"q": "Bench_019"}, _topic_budget),
        (
            "htmx /topics/?type=normal (table fragment)",
            "/topics/",
            {"type": "normal", "HTTP_HX_REQUEST": "true"},
            _topic_budget,
        ),
        ("API /api/v1/topics (page of 100)", "/api/v1/topics", {}, _topic_budget),
        ("API /api/v1/topics?page_size=1000", "/api/v1/topics", {"page_size": "1000"}, _topic_budget),
    ]
    if groups:
        scenarios += [
            ("page /groups/ (first 100 rows)", "/groups/", {}, _group_budget),
            (
                "htmx /groups/?q=BenchGroup_0099 (10 rows)",
                "/groups/",
                {"q": "BenchGroup_0099", "HTTP_HX_REQUEST": "true"},
                _group_budget,
            ),
            ("API /api/v1/groups?page_size=20", "/api/v1/groups", {"page_size": "20"}, _group_budget),
            ("API /api/v1/groups (page of 100)", "/api/v1/groups", {}, _group_budget),
            ("API /api/v1/groups?page_size=1000", "/api/v1/groups", {"page_size": "1000"}, _group_budget),
        ]
    results = []
    for label, url, params, within_budget in scenarios:
        headers = {k: v for k, v in params.items() if k.startswith("HTTP_")}
        query = {k: v for k, v in params.items() if not k.startswith("HTTP_")}
        for _ in range(3):  # warm up: connections, templates
            response = client.get(url, query, **headers)
            assert response.status_code == 200, (url, response.status_code, response.content[:500])
        counter.counts.clear()
        client.get(url, query, **headers)
        calls = dict(counter.counts)
        if not within_budget(calls):
            raise AssertionError(f"{label}: too many admin requests: {calls}")
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            client.get(url, query, **headers)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        results.append(
            {
                "label": label,
                "median": statistics.median(times),
                "p95": times[int(len(times) * 0.95) - 1],
                "best": times[0],
                "calls": calls,
            }
        )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=2000, help="user topics on each broker")
    parser.add_argument("--groups", type=int, default=1000, help="consumer groups on each broker (0: topics only)")
    parser.add_argument("--consumed-topics", type=int, default=100, help="topics the groups have offsets on")
    parser.add_argument("--runs", type=int, default=30, help="timed requests per scenario")
    parser.add_argument(
        "--goal-ms",
        type=float,
        default=300.0,
        help="the goal column's p95 bound (goals row 12, /api/v1/groups?page_size=1000: 200)",
    )
    args = parser.parse_args()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    tmp = Path(tempfile.mkdtemp(prefix="bench-console-"))
    try:
        with cluster(tmp, args.topics, args.groups, args.consumed_topics) as namesrv:
            _setup_django(tmp, namesrv)
            _wait_routed(args.topics)
            freeze_startup_heap()  # as each gunicorn worker does once it has loaded the app (console/gunicorn_conf.py)
            results = measure(args.runs, args.topics, args.groups, args.consumed_topics)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores; {args.topics} user topics and {args.groups} groups (offsets on {args.consumed_topics} topics) "
        f"on each of {len(BROKERS)} brokers, {args.runs} runs each, /proc/loadavg before: {load}"
    )
    print(
        f"| request | median (ms) | p95 (ms) | best (ms) | goal p95 ≤ {args.goal_ms:.0f} ms | admin requests per page |"
    )
    print("|---|---:|---:|---:|:---:|---|")
    for r in results:
        calls = ", ".join(f"{k} × {v}" for k, v in sorted(r["calls"].items()))
        print(
            f"| {r['label']} | {r['median']:.0f} | {r['p95']:.0f} | {r['best']:.0f} | {'yes' if r['p95'] <= args.goal_ms else 'no'} | {calls} |"
        )
    return 0 if all(r["median"] < 300 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
