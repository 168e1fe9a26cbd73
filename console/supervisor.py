"""A small process supervisor for ``make run``: start children in order, stop them in reverse.

Each child's output is echoed with a name prefix. A child may declare a ``ready`` marker: the
next child starts only once that text appeared in its output. If any child dies, the rest are
stopped and the supervisor exits non-zero; SIGINT/SIGTERM stop everything cleanly.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field


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
    def __init__(self, specs: list[ProcessSpec], out=sys.stdout, stop_timeout_s: float = 20.0) -> None:
        self.specs = specs
        self.out = out
        self.stop_timeout_s = stop_timeout_s
        self.children: list[tuple[ProcessSpec, subprocess.Popen]] = []
        self._stopping = threading.Event()
        self._sel = selectors.DefaultSelector()
        self._buffers: dict[int, bytes] = {}

    def _echo(self, name: str, line: str) -> None:
        self.out.write(f"[{name}] {line}\n")
        self.out.flush()

    def _spawn(self, spec: ProcessSpec) -> subprocess.Popen:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **spec.env}
        proc = subprocess.Popen(
            spec.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,  # Ctrl-C reaches only us; we stop children in order
        )
        os.set_blocking(proc.stdout.fileno(), False)
        self._sel.register(proc.stdout, selectors.EVENT_READ, (spec, proc))
        self.children.append((spec, proc))
        return proc

    def _pump(self, timeout: float) -> list[tuple[ProcessSpec, str]]:
        lines = []
        for key, _ in self._sel.select(timeout):
            spec, proc = key.data
            fd = key.fileobj.fileno()
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
                self._echo(spec.name, line)
                lines.append((spec, line))
        return lines

    def _check_alive(self) -> None:
        for spec, proc in self.children:
            if proc.poll() is not None:
                raise ChildFailed(f"{spec.name} exited with code {proc.returncode}")

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
                    raise ChildFailed(f"{spec.name} did not print {spec.ready_marker!r} within {spec.ready_timeout_s:.0f}s")
                for s, line in self._pump(0.2):
                    if s is spec and spec.ready_marker in line:
                        ready = True
                self._check_alive()

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
            self.wait()
            return 0
        except ChildFailed as exc:
            self._echo("run", f"error: {exc}")
            return 1
        finally:
            self.stop()
