"""BlockingRemotingClient: the asyncio client behind a thread-safe, blocking facade.

Django request threads and Celery workers call ``invoke`` from any thread; the calls run on an
event loop owned by a daemon thread, sharing one connection per address.  A call never blocks
its caller for longer than its timeout plus a small margin, even if the loop is slow to notice
the timeout.  After a fork (Celery prefork workers) the child starts a loop of its own on first
use; the parent's thread does not exist there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from brokers.engine import event_loop
from brokers.engine.common.constants import MAX_FRAME_SIZE
from brokers.engine.remoting.channel import Handler
from brokers.engine.remoting.client import CONNECT_TIMEOUT_S, DEFAULT_TIMEOUT_S, RemotingClient
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError, RemotingTimeoutError
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig

T = TypeVar("T")

TIMEOUT_MARGIN_S = 0.5  # slack over the caller's timeout before the caller gives up on the loop


class BlockingRemotingClient:
    """Blocking ``invoke`` / ``invoke_oneway`` on a private event-loop thread; thread-safe."""

    def __init__(
        self,
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        max_frame_size: int = MAX_FRAME_SIZE,
        name: str = "blocking-client",
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.signer = signer  # every request is signed by the asyncio client underneath
        self.tls = tls  # connections speak TLS when its outgoing side is on
        self.max_frame_size = max_frame_size
        self.name = name
        self._lock = threading.Lock()
        self._processors: dict[int, Handler] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: RemotingClient | None = None
        self._pid = 0
        self._closed = False

    # -- public API ----------------------------------------------------------------------------

    def invoke(self, addr: str, request: RemotingCommand, timeout_s: float = DEFAULT_TIMEOUT_S) -> RemotingCommand:
        """Send ``request`` to ``addr`` and return the response (RemotingError subclasses on failure)."""
        client = self._ensure_started()
        return self._run(client.invoke(addr, request, timeout_s), timeout_s, addr, request)

    def invoke_oneway(self, addr: str, request: RemotingCommand, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        client = self._ensure_started()
        self._run(client.invoke_oneway(addr, request, timeout_s), timeout_s, addr, request)

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
        """Run any coroutine on the client's loop (e.g. several invokes gathered) and wait for it."""
        self._ensure_started()
        return self._run(coro, timeout_s, None, None)

    @property
    def client(self) -> RemotingClient:
        """The asyncio client; only touch it from coroutines passed to :meth:`run`."""
        return self._ensure_started()

    def register_processor(self, code: int, handler: Handler) -> None:
        """Register an async handler for server -> client requests; it runs on the client's loop."""
        with self._lock:
            self._processors[int(code)] = handler
            if self._client is not None:
                self._client.register_processor(code, handler)

    def close(self) -> None:
        """Close every connection and stop the loop thread; later calls raise RemotingError."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread, client = self._loop, self._thread, self._client
            self._loop = self._thread = self._client = None
        if loop is None or self._pid != os.getpid():
            return
        try:
            if client is not None:  # set with the loop
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5.0)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=5.0)
        if not loop.is_running():
            loop.close()

    def __enter__(self) -> BlockingRemotingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------

    def _ensure_started(self) -> RemotingClient:
        with self._lock:
            if self._closed:
                raise RemotingError(f"{self.name} is closed")
            if self._client is not None and self._pid == os.getpid():
                return self._client
            loop = event_loop.new_event_loop()
            ready = threading.Event()

            def run_loop() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=run_loop, name=f"{self.name}-loop", daemon=True)
            thread.start()
            ready.wait()
            client = RemotingClient(
                connect_timeout_s=self.connect_timeout_s,
                max_frame_size=self.max_frame_size,
                name=self.name,
                signer=self.signer,
                tls=self.tls,
            )
            for code, handler in self._processors.items():
                client.register_processor(code, handler)
            self._loop, self._thread, self._client, self._pid = loop, thread, client, os.getpid()
            return client

    def _run(
        self, coro: Coroutine[Any, Any, T], timeout_s: float, addr: str | None, request: RemotingCommand | None
    ) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RemotingError(f"{self.name} is closed")
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout=timeout_s + TIMEOUT_MARGIN_S)
        except TimeoutError as exc:  # concurrent.futures.TimeoutError is TimeoutError since 3.11
            if isinstance(exc, RemotingError):
                raise
            future.cancel()
            code = request.code if request is not None else "?"
            raise RemotingTimeoutError(
                f"no response to request code {code} from {addr} within {timeout_s}s", addr, timeout_s
            ) from None
        except concurrent.futures.CancelledError:
            raise RemotingError(f"{self.name}: call cancelled (client closing)") from None
