"""Benchmark: whole-group ``allocate_all`` against the naive one-``allocate``-per-client way.

Run from the repository root::

    .venv/bin/python bench/allocation_bench.py            # 10,000 queues, 1,000 clients
    .venv/bin/python bench/allocation_bench.py --queues 2000 --consumers 200 --budget 1

Input: ``--queues`` queues spread over 50 brokers in 5 machine rooms (broker names
``room<r>@broker-<b>``, so MACHINE_ROOM and MACHINE_ROOM_NEARBY have work to do) and
``--consumers`` client ids ``10.<r>.<n>.<m>@<pid>`` in 4 of those rooms (room 4 has queues
but no client, so NEARBY also shares an orphan room). Both lists are shuffled: ``allocate_all``
pays RocketMQ's sorting too.

``allocate_all`` is timed over ``--repeat`` runs (best and median). The naive way sorts once,
then calls ``allocate`` for every client, as each RocketMQ client does for itself. When that
exceeds ``--budget`` seconds for a strategy, the clients timed so far (spread evenly over the
group) are extrapolated to the whole group and the row says so. Every sampled client's naive
result is checked against ``allocate_all``'s.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from brokers.engine.client.allocation import MessageQueue, allocate_all, get_strategy  # noqa: E402
from brokers.engine.client.allocation.strategy import sort_for_rebalance  # noqa: E402

ROOMS = 5  # machine rooms holding brokers
CLIENT_ROOMS = 4  # rooms with clients; the last room's queues are orphans for NEARBY
BROKERS = 50


class IpRoomResolver:
    """Rooms from names: brokers ``room<r>@...``, clients ``10.<r>.x.y@pid``."""

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        return mq.broker_name.split("@", 1)[0]

    def consumer_deploy_in(self, cid: str) -> str:
        return "room" + cid.split(".", 2)[1]


def build_input(queue_count: int, consumer_count: int, seed: int) -> tuple[list, list]:
    per_broker, extra = divmod(queue_count, BROKERS)
    mqs = [
        MessageQueue("BenchTopic", f"room{b % ROOMS}@broker-{b:02d}", q)
        for b in range(BROKERS)
        for q in range(per_broker + (1 if b < extra else 0))
    ]
    cids = [f"10.{i % CLIENT_ROOMS}.{i // 250}.{i % 250}@{4000 + i}" for i in range(consumer_count)]
    rng = random.Random(seed)
    rng.shuffle(mqs)
    rng.shuffle(cids)
    return mqs, cids


def strategies(mqs: list[MessageQueue]) -> list:
    resolver = IpRoomResolver()
    configured = sorted(mqs)[:10]
    return [
        get_strategy("AVG"),
        get_strategy("AVG_BY_CIRCLE"),
        get_strategy("CONFIG", message_queue_list=configured),
        get_strategy("MACHINE_ROOM", consumeridcs={"room0", "room1", "room2"}),
        get_strategy("MACHINE_ROOM_NEARBY", inner="AVG", resolver=resolver),
        get_strategy("MACHINE_ROOM_NEARBY", inner="CONSISTENT_HASH", resolver=resolver),
        get_strategy("CONSISTENT_HASH", virtual_node_cnt=10),
    ]


def time_whole_group(strategy, mqs, cids, repeat: int) -> tuple[float, float, dict]:
    runs = []
    result: dict = {}
    for _ in range(repeat):
        start = time.perf_counter()
        result = allocate_all(strategy, mqs, cids)
        runs.append(time.perf_counter() - start)
    return min(runs), statistics.median(runs), result


def time_naive(strategy, mqs, cids, budget: float, expected: dict) -> tuple[float, int]:
    """Return (seconds for the whole group, clients actually timed)."""
    start = time.perf_counter()
    sorted_mqs, sorted_cids = sort_for_rebalance(mqs, cids)
    sort_time = time.perf_counter() - start
    n = len(sorted_cids)
    # An even spread of clients, so a partial run is a fair sample of the group.
    order = sorted(range(n), key=lambda i: ((i * 7919) % n, i))
    spent = 0.0
    timed = 0
    for i in order:
        cid = sorted_cids[i]
        t0 = time.perf_counter()
        got = strategy.allocate("BenchGroup", cid, sorted_mqs, sorted_cids)
        spent += time.perf_counter() - t0
        timed += 1
        if got != expected[cid]:
            raise AssertionError(f"{strategy.name}: naive and whole-group differ for {cid}")
        if spent > budget and timed < n:
            break
    return sort_time + spent / timed * n, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queues", type=int, default=10_000)
    parser.add_argument("--consumers", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=7, help="allocate_all runs per strategy")
    parser.add_argument("--budget", type=float, default=5.0, help="naive seconds before sampling")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument(
        "--goal-ms",
        type=float,
        default=35.0,
        help="the goal column's bound on the median (the allocation row: 35 ms, every strategy)",
    )
    args = parser.parse_args()

    mqs, cids = build_input(args.queues, args.consumers, args.seed)
    print(f"# allocation bench: {len(mqs)} queues, {len(cids)} clients")
    print(
        f"# {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, Python {platform.python_version()},"
        f" {platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or platform.platform()}"
    )
    print()
    print(
        f"| strategy | allocate_all best (ms) | median (ms) | goal: median ≤ {args.goal_ms:g} ms | naive (ms) | naive clients timed | speed-up |"
    )
    print("|---|---:|---:|:---:|---:|---:|---:|")
    for strategy in strategies(mqs):
        best, median, result = time_whole_group(strategy, mqs, cids, args.repeat)
        naive, timed = time_naive(strategy, mqs, cids, args.budget, result)
        note = f"{timed}" if timed == len(set(cids)) else f"{timed} (extrapolated)"
        print(
            f"| {strategy.name} | {best * 1e3:.1f} | {median * 1e3:.1f} | "
            f"{'yes' if median * 1e3 <= args.goal_ms else 'NO'} | {naive * 1e3:,.0f} | {note} | {naive / best:,.0f}x |"
        )


if __name__ == "__main__":
    main()
