"""cProfile over every thread of this process, and the top of a profile by tottime.

Python 3.11's cProfile profiles only the thread that enables it; a client's work runs on its
event-loop thread. ``ThreadProfiles`` wraps ``threading.Thread.run`` so that every thread started
inside the ``with`` gets a profiler of its own, plus one for the calling thread; ``dump`` merges
them (after the threads have ended, so every profiler is disabled by its own thread).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import threading
import time
from pathlib import Path


class ThreadProfiles:
    def __init__(self, clock: str = "wall") -> None:
        self.timer = time.thread_time if clock == "cpu" else None
        self.profiles: list[cProfile.Profile] = []
        self._orig_run = threading.Thread.run

    def __enter__(self) -> ThreadProfiles:
        profiles, orig_run, self_ = self.profiles, self._orig_run, self

        def run(thread: threading.Thread) -> None:
            prof = self_.new()
            profiles.append(prof)
            prof.enable()
            try:
                orig_run(thread)
            finally:
                prof.disable()

        threading.Thread.run = run  # type: ignore[method-assign]
        self._main = self.new()
        self._main.enable()
        return self

    def new(self) -> cProfile.Profile:
        return cProfile.Profile(self.timer) if self.timer else cProfile.Profile()

    def __exit__(self, *exc: object) -> None:
        self._main.disable()
        threading.Thread.run = self._orig_run  # type: ignore[method-assign]
        self.profiles.append(self._main)

    def dump(self, path: Path) -> None:
        stats = pstats.Stats(self.profiles[0])
        for prof in self.profiles[1:]:
            stats.add(prof)
        stats.dump_stats(str(path))


def print_top(path: Path, title: str, top: int) -> None:
    """The ``top`` functions by tottime, as a markdown table."""
    stats = pstats.Stats(str(path), stream=io.StringIO())
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"\n{title}: {total:.2f} s in all\n")
    print("| tottime s | % | cumtime s | calls | function |")
    print("| ---: | ---: | ---: | ---: | --- |")
    for (filename, line, name), (cc, nc, tt, ct, _callers) in rows:
        where = filename.split("/brokers/", 1)[-1] if "/brokers/" in filename else Path(filename).name
        where = f"brokers/{where}" if "/brokers/" in filename else where
        print(f"| {tt:.3f} | {tt / total * 100:.1f} | {ct:.3f} | {nc} | `{where}:{line}({name})` |")
