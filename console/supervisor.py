"""A small process supervisor for ``make run``: start children in order, stop them in reverse.

A child may declare a ``ready`` marker: the next child starts only once that text appeared in its
output. If any child dies, the rest are stopped, the dead child's last lines are shown and the
supervisor exits non-zero; SIGINT/SIGTERM stop everything cleanly.

Output: with a ``log_dir`` every line of a child goes to ``<log_dir>/<name>.log`` (0600), and the
terminal gets only what a person must see — "<name> is up" per child, warnings, errors and
tracebacks, and the ``ready_message`` once everything is up (how to log in), so that message is
the last thing on the screen instead of scrolling away under hundreds of INFO lines.
``verbose`` (or no ``log_dir``) echoes every line with its name prefix, as before.
"""

from __future__ import annotations

import collections
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

# A line worth a person's attention while everything runs: a log record at WARNING or above, a
# traceback, or an error a tool printed.
NOTEWORTHY = re.compile(r"\b(WARNING|ERROR|CRITICAL|FATAL)\b|Traceback \(most recent call last\)|\b[Ee]rror: ")
# ... except the JVM's notice at every Spark start (harmless; still in var/log/analytics.log).
KNOWN_NOISE = re.compile(r"WARNING: Using incubator modules")
TAIL_LINES = 20  # lines of a dead child shown on the terminal


@dataclass(frozen=True)
class ProcessSpec:
    name: str
    argv: list[str]
    ready_marker: str | None = None  # text that shows the process is serving
    ready_timeout_s: float = 60.0
    env: dict[str, str] = field(default_factory=dict)


class ChildFailed(RuntimeError):
    pass


class Supervisor:
    def __init__(
        self,
        specs: list[ProcessSpec],
        out=sys.stdout,
        stop_timeout_s: float = 20.0,
        *,
        log_dir: Path | None = None,
        verbose: bool = False,
        ready_message: list[str] | None = None,
    ) -> None:
        self.specs = specs
        self.out = out
        self.stop_timeout_s = stop_timeout_s
        self.log_dir = log_dir
        self.verbose = verbose or log_dir is None
        self.ready_message = ready_message or []
        self.children: list[tuple[ProcessSpec, subprocess.Popen]] = []
        self._stopping = threading.Event()
        self._sel = selectors.DefaultSelector()
        self._buffers: dict[int, bytes] = {}
        self._logs: dict[str, IO[str]] = {}
        self._tails: dict[str, collections.deque[str]] = {}

    def _echo(self, name: str, line: str) -> None:
        self.out.write(f"[{name}] {line}\n")
        self.out.flush()

    def _record(self, name: str, line: str) -> None:
        """A child's line: into its log file and its tail; onto the terminal when verbose or noteworthy."""
        log = self._logs.get(name)
        if log is not None:
            log.write(line + "\n")
            log.flush()
        self._tails.setdefault(name, collections.deque(maxlen=TAIL_LINES)).append(line)
        if self.verbose or (NOTEWORTHY.search(line) and not KNOWN_NOISE.search(line)):
            self._echo(name, line)

    def _open_log(self, name: str) -> None:
        if self.log_dir is None or name in self._logs:
            return
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.log_dir / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._logs[name] = os.fdopen(fd, "a", encoding="utf-8")

    def _spawn(self, spec: ProcessSpec) -> subprocess.Popen:
        self._open_log(spec.name)
        # GANTRY_PROCESS_NAME: the service's name in its log lines (console.log_format)
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "GANTRY_PROCESS_NAME": spec.name, **spec.env}
        proc = subprocess.Popen(
            spec.argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # Ctrl-C reaches only us; we stop children in order
        )
        assert proc.stdout is not None  # stdout=PIPE
        os.set_blocking(proc.stdout.fileno(), False)
        self._sel.register(proc.stdout, selectors.EVENT_READ, (spec, proc))
        self.children.append((spec, proc))
        return proc

    def _pump(self, timeout: float) -> list[tuple[ProcessSpec, str]]:
        lines = []
        for key, _ in self._sel.select(timeout):
            spec, proc = key.data
            fd = key.fd
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                self._sel.unregister(key.fileobj)
                continue
            buf = self._buffers.get(fd, b"") + chunk
            *complete, rest = buf.split(b"\n")
            self._buffers[fd] = rest
            for raw in complete:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                self._record(spec.name, line)
                lines.append((spec, line))
        return lines

    def _check_alive(self) -> None:
        for spec, proc in self.children:
            if proc.poll() is not None:
                self._pump(0)
                if not self.verbose:  # its last words, which the terminal did not show
                    for line in self._tails.get(spec.name, ()):
                        self._echo(spec.name, line)
                where = f" (its whole output: {self.log_dir / (spec.name + '.log')})" if self.log_dir else ""
                raise ChildFailed(f"{spec.name} exited with code {proc.returncode}{where}")

    def start(self) -> None:
        for spec in self.specs:
            self._spawn(spec)
            if spec.ready_marker is None:
                continue
            deadline = time.monotonic() + spec.ready_timeout_s
            ready = False
            while not ready:
                if self._stopping.is_set():
                    return
                if time.monotonic() > deadline:
                    raise ChildFailed(
                        f"{spec.name} did not print {spec.ready_marker!r} within {spec.ready_timeout_s:.0f}s"
                    )
                for s, line in self._pump(0.2):
                    if s is spec and spec.ready_marker in line:
                        ready = True
                self._check_alive()
            if not self.verbose:
                self._echo("run", f"{spec.name} is up")

    def wait(self) -> None:
        while not self._stopping.is_set():
            self._pump(0.5)
            self._check_alive()

    def request_stop(self, *_: object) -> None:
        self._stopping.set()

    def stop(self) -> None:
        for spec, proc in reversed(self.children):
            if proc.poll() is None:
                self._echo("run", f"stopping {spec.name}")
                proc.send_signal(signal.SIGTERM)
                deadline = time.monotonic() + self.stop_timeout_s
                while proc.poll() is None and time.monotonic() < deadline:
                    self._pump(0.2)
                if proc.poll() is None:
                    self._echo("run", f"{spec.name} did not stop in {self.stop_timeout_s:.0f}s; killing it")
                    proc.kill()
                    proc.wait()
        self._pump(0)

    def run(self) -> int:
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGTERM, self.request_stop)
        try:
            self.start()
            if not self._stopping.is_set():
                self._echo("run", "all services are up; press Ctrl-C to stop")
                if self.log_dir is not None and not self.verbose:
                    self._echo("run", f"each service's whole output is in {self.log_dir}/<name>.log")
                for line in self.ready_message:
                    self.out.write(line + "\n")
                self.out.flush()
            self.wait()
            return 0
        except ChildFailed as exc:
            self._echo("run", f"error: {exc}")
            return 1
        finally:
            self.stop()
            for log in self._logs.values():
                log.close()
