"""What the performance-goal benches share: a measured run, rows of two systems alternated over runs, and
the markdown table of medians, spread and ratios (bench/user_api_bench.py, bench/broker_bench.py).

Every measured run records ``/proc/loadavg`` before it and the CPU seconds of the server process
(``/proc/<pid>/stat``, every thread) and of this client process (``os.times``, every thread)
around it, so the table can give CPU per message on both sides. Rows alternate which system goes
first run after run, so both see the same drift of a shared machine.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import redis
import redis.utils

_TICKS = os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    """The 1/5/15-minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (every thread), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


# A hostile bench's --pin: the attacker alone on one core, the server and the victim together on the other.
ATTACKER_CPU, SERVED_CPU = 1, 0


def pin_to(cpu: int) -> None:
    """Run this process, and the processes it starts from now on, on core ``cpu`` only."""
    os.sched_setaffinity(0, {cpu})


class CpuShare:
    """Process ``pid``'s CPU as its share of a core, over the windows counted under each label
    (a benchmark's quiet and attacked windows, say): ``with share.counting("quiet"): ...``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._cpu: dict[str, float] = {}
        self._wall: dict[str, float] = {}

    @contextmanager
    def counting(self, label: str) -> Iterator[None]:
        began, cpu_began = time.monotonic(), cpu_seconds(self.pid)
        try:
            yield
        finally:
            self._cpu[label] = self._cpu.get(label, 0.0) + cpu_seconds(self.pid) - cpu_began
            self._wall[label] = self._wall.get(label, 0.0) + time.monotonic() - began

    def share(self, label: str) -> float:
        return self._cpu.get(label, 0.0) / self._wall[label] if self._wall.get(label) else float("nan")


def own_cpu() -> float:
    t = os.times()
    return t.user + t.system


@dataclass(frozen=True)
class Run:
    """One measured run of one system: messages, seconds, CPU seconds of server and client."""

    messages: int
    seconds: float
    server_cpu: float
    client_cpu: float
    load: str

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds else float("inf")


class Meter:
    """Start before the measured part (after set-up: connections, routes), stop with the count."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid

    def start(self) -> None:
        self.load = loadavg()
        self.s0, self.c0 = cpu_seconds(self.server_pid), own_cpu()
        self.t0 = time.perf_counter()

    def stop(self, messages: int) -> Run:
        seconds = time.perf_counter() - self.t0
        return Run(messages, seconds, cpu_seconds(self.server_pid) - self.s0, own_cpu() - self.c0, self.load)


def timed(server_pid: int, fn: Callable[[], int]) -> Run:
    """Run ``fn`` (returns messages done) with the load before it and both CPU deltas around it."""
    meter = Meter(server_pid)
    meter.start()
    return meter.stop(fn())


@dataclass
class Row:
    """One row of the goals table (docs/benchmarks.md): Gantry's runs and the other system's runs (Redis, or the
    minimal asyncio broker), paired run by run."""

    name: str
    goal: str
    gantry: list[Run] = field(default_factory=list)
    other: list[Run] = field(default_factory=list)
    note: str = ""


def alternate(
    row: Row, runs: int, gantry: Callable[[int], Run] | None, other: Callable[[int], Run], other_name: str = "redis"
) -> None:
    """``runs`` runs of each side, Gantry first in even runs and the other system first in odd ones."""
    for i in range(runs):
        for side in ("g", "o") if i % 2 == 0 else ("o", "g"):
            if side == "g" and gantry is not None:
                row.gantry.append(gantry(i))
                print(
                    f"  {row.name} run {i + 1} gantry: {row.gantry[-1].rate:,.0f} msgs/s (load {row.gantry[-1].load})",
                    flush=True,
                )
            elif side == "o":
                row.other.append(other(i))
                print(
                    f"  {row.name} run {i + 1} {other_name}: {row.other[-1].rate:,.0f} msgs/s (load {row.other[-1].load})",
                    flush=True,
                )


def med(values: list[float], fmt: str = ",.0f") -> str:
    """Median (min–max)."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def ratio(gantry: list[Run], other: list[Run]) -> str:
    """The per-run ratios Gantry / other: **median×** (min–max)."""
    ratios = [g.rate / o.rate for g, o in zip(gantry, other)]
    return f"**{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f})"


def cpu_us(runs: list[Run], which: str) -> str:
    """Median µs of ``which`` CPU (server_cpu or client_cpu) per message."""
    return f"{statistics.median([getattr(r, which) / r.messages * 1e6 for r in runs]):.0f}"


def require_hiredis() -> str:
    """The header fragment naming redis-py and hiredis; exits without hiredis (the goals' anchor
    is redis-py in the configuration users install, ``redis[hiredis]``)."""
    if not redis.utils.HIREDIS_AVAILABLE:
        raise SystemExit(
            "hiredis is not installed (redis.utils.HIREDIS_AVAILABLE is False): "
            ".venv/bin/pip install -r bench/requirements.txt"
        )
    return f"redis-py {redis.__version__} (redis.utils.HIREDIS_AVAILABLE={redis.utils.HIREDIS_AVAILABLE})"


def machine_header(details: str) -> str:
    return (
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {details}"
    )


def print_table(rows: list[Row], other: str = "Redis", other_server: str = "redis-server") -> None:
    """The markdown table: rates, ratio Gantry / other, CPU per message on both sides."""
    print(
        f"| row | goal | Gantry msgs/s, median (min–max) | {other} msgs/s, median (min–max) | Gantry / {other} | "
        f"CPU µs/msg broker · client | CPU µs/msg {other_server} · client |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        theirs = f"{med([r.rate for r in row.other])} | " if row.other else "– | "
        their_cpu = f"{cpu_us(row.other, 'server_cpu')} · {cpu_us(row.other, 'client_cpu')} |" if row.other else "– |"
        if row.gantry and row.other:
            print(
                f"| {row.name} | {row.goal} | {med([r.rate for r in row.gantry])} | {theirs}{ratio(row.gantry, row.other)} | "
                f"{cpu_us(row.gantry, 'server_cpu')} · {cpu_us(row.gantry, 'client_cpu')} | {their_cpu}"
            )
        else:
            print(f"| {row.name} | {row.goal} | {row.note or 'skipped'} | {theirs}– | – | {their_cpu}")


def print_loads(rows: list[Row], other: str = "Redis") -> None:
    print(f"\nLoad (/proc/loadavg 1/5/15 min) before each run, Gantry · {other}:")
    for row in rows:
        pairs = [f"{g.load} · {o.load}" for g, o in zip(row.gantry, row.other)] or [f"– · {o.load}" for o in row.other]
        print(f"- {row.name}: " + " | ".join(pairs))
