"""Run ``python -m MODULE ARGS...`` under cProfile and write the profile when it returns.

    python bench/profiled_main.py OUT.prof wall|cpu MODULE [ARGS...]

``cpu`` times with ``time.thread_time`` (CPU of the profiled thread: waits in epoll and lock
acquires count for nothing, and kernel time of a syscall counts), ``wall`` with cProfile's
default clock. Used by bench/user_api_cluster.py to profile the broker's main thread (its event
loop); the broker returns from its main on SIGTERM, so the profile is written.
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time

if __name__ == "__main__":
    out, clock, module, *rest = sys.argv[1:]
    sys.argv = [module, *rest]
    prof = cProfile.Profile(time.thread_time) if clock == "cpu" else cProfile.Profile()
    prof.enable()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        prof.disable()
        prof.dump_stats(out)
