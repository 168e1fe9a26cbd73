"""After a server's start-up, move what start-up made out of the cyclic collector's walk.

A name server or broker starts by importing its modules and loading its tables (topics, groups,
offsets, the recovered store's queues): tens of thousands of container objects that live as long
as the process. CPython's full collection (generation 2) walks every tracked object, so each one
held the broker's event loop for ~10-13 ms on the 2-core VM, for objects that can never be
garbage (``bench/client_bench.py``'s latency rows; docs/benchmarks.md). Frozen (``gc.freeze``)
they are left out of every collection and a full one walks only what was made since (~0.2 ms
there). Reference counting still frees a frozen object the moment it is dropped; only a reference
cycle among them would wait for the process's end. Start-up's own garbage is collected first, so
none of it is frozen.

This is the servers' choice for their own processes: the client library never freezes its
application's heap.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_heap"]


def freeze_startup_heap() -> int:
    """Collect start-up's garbage, then freeze every object left; return how many are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
