"""Micro-benchmark of the store's write and read paths (not run by CI).

    .venv/bin/python bench/store_bench.py [--messages N] [--size BYTES] [--sync] [--batch K]

Prints messages/s for put_message (asyncio, one producer coroutine at a time, or many
concurrent ones with --concurrency), put_messages (batches) and get_message.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.message_codec import encode_batch_body  # noqa: E402
from brokers.engine.store import (  # noqa: E402
    DefaultMessageStore,
    MessageExtBatch,
    MessageExtBrokerInner,
    StoreConfig,
)


def _inner(i: int, body: bytes) -> MessageExtBrokerInner:
    return MessageExtBrokerInner(
        topic="BenchTopic",
        queue_id=i % 8,
        body=body,
        properties={"TAGS": "TagA", "UNIQ_KEY": uuid.uuid4().hex.upper(), "CLUSTER": "DefaultCluster"},
        born_timestamp=1_700_000_000_000,
        born_host="10.0.0.5:51000",
    )


async def _put(store: DefaultMessageStore, n: int, size: int, concurrency: int) -> float:
    body = os.urandom(size)
    msgs = [_inner(i, body) for i in range(n)]
    start = time.perf_counter()
    if concurrency <= 1:
        for m in msgs:
            await store.put_message(m)
    else:
        sem = asyncio.Semaphore(concurrency)

        async def one(m: MessageExtBrokerInner) -> None:
            async with sem:
                await store.put_message(m)

        await asyncio.gather(*(one(m) for m in msgs))
    return n / (time.perf_counter() - start)


async def _put_batches(store: DefaultMessageStore, n: int, size: int, k: int) -> float:
    body = os.urandom(size)
    batches = []
    for b in range(n // k):
        entries = [
            Message("BenchTopic", body, tags="TagA", properties={"UNIQ_KEY": uuid.uuid4().hex.upper()})
            for _ in range(k)
        ]
        batches.append(
            MessageExtBatch(
                "BenchTopic",
                b % 8,
                encode_batch_body(entries),
                {"CLUSTER": "DefaultCluster"},
                born_host="10.0.0.5:51000",
            )
        )
    start = time.perf_counter()
    for batch in batches:
        await store.put_messages(batch)
    return (len(batches) * k) / (time.perf_counter() - start)


def _get(store: DefaultMessageStore) -> float:
    start = time.perf_counter()
    got = 0
    for q in range(8):
        offset = 0
        while True:
            r = store.get_message("g", "BenchTopic", q, offset, 32)
            if not r.records:
                break
            got += r.message_count
            offset = r.next_begin_offset
    return got / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--sync", action="store_true", help="SYNC_FLUSH (group commit)")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="store-bench-")
    try:
        cfg = StoreConfig(
            store_dir=root,
            flush_disk_type="SYNC_FLUSH" if args.sync else "ASYNC_FLUSH",
            commitlog_file_size=256 << 20,
            max_index_hash_slots=500_000,
            max_index_count=2_000_000,
        )
        with DefaultMessageStore(cfg) as store:
            rate = asyncio.run(_put(store, args.messages, args.size, args.concurrency))
            print(
                f"put_message   {rate:10.0f} msg/s  ({args.size}-byte bodies, "
                f"{cfg.flush_disk_type}, concurrency {args.concurrency}, "
                f"fdatasync calls {store.flush_service.fsync_count})"
            )
            rate = asyncio.run(_put_batches(store, args.messages, args.size, args.batch))
            print(f"put_messages  {rate:10.0f} msg/s  (batches of {args.batch})")
            print(f"get_message   {_get(store):10.0f} msg/s  (32 per pull)")
        t = time.perf_counter()
        with DefaultMessageStore(cfg) as store:
            print(
                f"reopen        {time.perf_counter() - t:10.2f} s   ({store.recovery_report.records_checked} records checked)"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
