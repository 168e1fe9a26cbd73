"""The metadata drill, 20 cycles: acknowledged, replicated messages stay readable when the SYNC_MASTER
dies (SIGKILL, store deleted) within seconds of creating their topic.

Each cycle is ``tests/brokers/engine/_metadata_drill.py``'s ``run_cycle``: a fresh SYNC_MASTER and
slave (subprocesses), a topic created, ``--messages`` sent and acknowledged, the master killed and its
store deleted, a new consumer reading the topic from the slave through the name server. Prints one
line per cycle and the total of unreadable messages (the goal: 0).

    .venv/bin/python bench/metadata_drill.py [--cycles 20] [--messages 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.brokers.engine._group_procs import NamesrvProc  # noqa: E402
from tests.brokers.engine._metadata_drill import run_cycle  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    started = time.monotonic()
    unreadable = 0
    with tempfile.TemporaryDirectory(prefix="metadata-drill-") as tmp:
        root = Path(tmp)
        namesrv = NamesrvProc(root).start()
        try:
            for cycle in range(args.cycles):
                result = run_cycle(root, namesrv, cycle, messages=args.messages)
                unreadable += result.unreadable
                print(
                    f"cycle {cycle + 1:2d}: acknowledged {result.acknowledged}, read from the slave {result.read}, "
                    f"unreadable {result.unreadable}; master killed {result.seconds_from_create_to_kill:.2f} s "
                    "after the topic was created",
                    flush=True,
                )
        finally:
            namesrv.stop()
    print(f"{args.cycles} cycles, {unreadable} unreadable messages in all ({time.monotonic() - started:.0f} s)")
    return 1 if unreadable else 0


if __name__ == "__main__":
    sys.exit(main())
