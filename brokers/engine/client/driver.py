"""Drivers: run plans (:mod:`brokers.engine.client.plan`) over a remoting client.

- :class:`AsyncDriver` over :class:`~brokers.engine.remoting.client.RemotingClient` (asyncio;
  a Fanout's calls run concurrently);
- :class:`BlockingDriver` over :class:`~brokers.engine.remoting.blocking.BlockingRemotingClient`
  (thread-safe, for Django and Celery; a Fanout runs on the client's loop at once).

A call without an address goes to the name servers: each is tried in turn, starting from the
last one that answered, until one answers; when none does, RemotingConnectError names them all.
:func:`async_operation` and :func:`blocking_operation` turn a plan method into a client method
that runs it on ``self.driver`` with ``self.plans``. A driver given a ``signer`` (the ACL's
AclClientHook) builds its remoting client with it, so every request it sends is signed; one given
a ``tls`` (:class:`~brokers.engine.remoting.tls.TlsConfig`) builds it speaking TLS.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any, Generic, TypeVar

from brokers.engine.client.plan import Call, Fanout, Plan, Reply
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs  # re-exported: the clients' one rule
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "AsyncDriver",
    "BlockingDriver",
    "async_operation",
    "blocking_operation",
    "parse_namesrv_addrs",
]

T = TypeVar("T")
R = TypeVar("R", RemotingClient, BlockingRemotingClient)
DEFAULT_TIMEOUT_S = 3.0  # RocketMQ's mqClientApiTimeout


def _request(call: Call) -> RemotingCommand:
    """A fresh request for ``call`` (so a retry gets a fresh opaque)."""
    return RemotingCommand.request(call.code, call.ext_fields, call.body, oneway=call.oneway)


async def _send_on(client: RemotingClient, call: Call, timeout: float) -> Reply:
    """Send one addressed call on an asyncio client."""
    request = _request(call)
    if call.oneway:
        await client.invoke_oneway(call.addr, request, timeout)  # type: ignore[arg-type]
        return Reply(call.addr, None)  # type: ignore[arg-type]
    return Reply(call.addr, await client.invoke(call.addr, request, timeout))  # type: ignore[arg-type]


class _DriverBase(Generic[R]):
    """Name server addresses and preference, the remoting client, and plan stepping.

    A driver runs two kinds of plan with one loop (``_drive``): the operation's plan, whose
    steps are Calls and Fanouts, and for each Call the plan of :meth:`_routed`, whose steps are
    addressed Calls sent as they are.
    """

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        timeout_s: float,
        remoting: R | None,
        make_remoting: Callable[[], R],
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        if remoting is not None and signer is not None:
            raise ValueError(
                "a driver given its remoting client signs with that client's signer; give the signer to it"
            )
        if remoting is not None and tls is not None:
            raise ValueError("a driver given its remoting client connects as that client does; give tls to it")
        self.namesrv_addrs = parse_namesrv_addrs(namesrv_addrs)
        self.timeout_s = timeout_s
        self._preferred = 0  # index of the name server that answered last
        self.remoting: R = remoting or make_remoting()
        self._owns_remoting = remoting is None

    def _timeout(self, call: Call) -> float:
        return call.timeout_s or self.timeout_s

    def _namesrv_order(self) -> list[str]:
        n, start = len(self.namesrv_addrs), self._preferred
        return [self.namesrv_addrs[(start + i) % n] for i in range(n)]

    def _routed(self, call: Call) -> Plan[Reply]:
        """Send ``call`` as is when it has an address, else to each name server in turn until one answers."""
        if call.addr is not None:
            answer: Reply = yield call
            return answer
        errors: list[tuple[str, Exception]] = []
        for addr in self._namesrv_order():
            try:
                reply: Reply = yield replace(call, addr=addr)
            except RemotingError as exc:
                errors.append((addr, exc))
                continue
            self._preferred = self.namesrv_addrs.index(addr)
            return reply
        detail = "; ".join(f"{a}: {e}" for a, e in errors)
        raise RemotingConnectError(f"no name server answered ({detail})", ";".join(a for a, _ in errors))

    @staticmethod
    def _step(plan: Plan[Any], value: Any, error: BaseException | None) -> Call | Fanout:
        return plan.throw(error) if error is not None else plan.send(value)


class AsyncDriver(_DriverBase[RemotingClient]):
    """Run plans over an asyncio RemotingClient; a Fanout's calls run concurrently."""

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: RemotingClient | None = None,
        *,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        super().__init__(
            namesrv_addrs, timeout_s, remoting, lambda: RemotingClient(signer=signer, tls=tls), signer, tls
        )

    async def run(self, plan: Plan[T]) -> T:
        return await self._drive(plan, self.execute)

    def invoke(self, call: Call) -> Awaitable[Reply]:
        """Send one call (to the name servers in turn when it has no address); await the Reply."""
        if call.addr is not None:  # the common case: no name server rotation to drive
            return self._send(call)
        return self._drive(self._routed(call), self._send)

    async def _drive(self, plan: Plan[T], execute: Callable[[Any], Awaitable[Any]]) -> T:
        """Feed ``plan`` the outcome of executing each of its steps (a RemotingError is thrown in)."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = self._step(plan, value, error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            try:
                value = await execute(step)
            except RemotingError as exc:
                error = exc

    def execute(self, step: Call | Fanout) -> Awaitable[Reply | list[Reply | RemotingError]]:
        """Send one step of a plan: a Call (its Reply), or a Fanout's calls together (a Reply or RemotingError each)."""
        if isinstance(step, Fanout):
            return asyncio.gather(*(self._one_or_error(c) for c in step.calls))
        return self.invoke(step)

    async def _one_or_error(self, call: Call) -> Reply | RemotingError:
        try:
            return await self.invoke(call)
        except RemotingError as exc:
            return exc

    def _send(self, call: Call) -> Awaitable[Reply]:
        return _send_on(self.remoting, call, call.timeout_s or self.timeout_s)

    async def close(self) -> None:
        if self._owns_remoting:
            await self.remoting.close()


class BlockingDriver(_DriverBase[BlockingRemotingClient]):
    """Run plans over a BlockingRemotingClient from any thread; a Fanout runs on its loop at once."""

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: BlockingRemotingClient | None = None,
        *,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        super().__init__(
            namesrv_addrs, timeout_s, remoting, lambda: BlockingRemotingClient(signer=signer, tls=tls), signer, tls
        )

    def run(self, plan: Plan[T]) -> T:
        return self._drive(plan, self._execute)

    def invoke(self, call: Call) -> Reply:
        if call.addr is not None:
            return self._send(call)
        return self._drive(self._routed(call), self._send)

    def _drive(self, plan: Plan[T], execute: Callable[[Any], Any]) -> T:
        """Feed ``plan`` the outcome of executing each of its steps (a RemotingError is thrown in)."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = self._step(plan, value, error)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            try:
                value = execute(step)
            except RemotingError as exc:
                error = exc

    def _execute(self, step: Call | Fanout) -> Reply | list[Reply | RemotingError]:
        return self._fanout(step) if isinstance(step, Fanout) else self.invoke(step)

    def _fanout(self, fanout: Fanout) -> list[Reply | RemotingError]:
        calls = list(fanout.calls)
        if any(c.addr is None for c in calls) or len(calls) <= 1:
            return [self._one_or_error(c) for c in calls]
        client = self.remoting.client

        async def one(c: Call) -> Reply | RemotingError:
            try:
                return await _send_on(client, c, self._timeout(c))
            except RemotingError as exc:
                return exc

        async def gather() -> list[Reply | RemotingError]:
            return list(await asyncio.gather(*(one(c) for c in calls)))

        return self.remoting.run(gather(), max(self._timeout(c) for c in calls))

    def _one_or_error(self, call: Call) -> Reply | RemotingError:
        try:
            return self.invoke(call)
        except RemotingError as exc:
            return exc

    def _send(self, call: Call) -> Reply:
        request = _request(call)
        timeout = self._timeout(call)
        if call.oneway:
            self.remoting.invoke_oneway(call.addr, request, timeout)  # type: ignore[arg-type]
            return Reply(call.addr, None)  # type: ignore[arg-type]
        return Reply(call.addr, self.remoting.invoke(call.addr, request, timeout))  # type: ignore[arg-type]

    def close(self) -> None:
        if self._owns_remoting:
            self.remoting.close()


# -- plan methods as client methods ---------------------------------------------------------------


def _unwrap_plan_annotation(operation: Callable[..., Any], plan_fn: Callable[..., Any]) -> None:
    """Annotate the client method with what the plan returns (``Plan[X]`` -> ``X``)."""
    annotations = dict(plan_fn.__annotations__)
    ret = annotations.get("return")
    if isinstance(ret, str) and ret.startswith("Plan[") and ret.endswith("]"):
        annotations["return"] = ret[5:-1]
    operation.__annotations__ = annotations
    operation.__signature__ = inspect.signature(plan_fn).replace(return_annotation=annotations.get("return"))  # type: ignore[attr-defined]


def async_operation(plan_fn: Callable[..., Plan[T]]) -> Callable[..., Any]:
    """A coroutine method running ``plan_fn(self.plans, ...)`` on ``self.driver`` (an AsyncDriver)."""

    @functools.wraps(plan_fn)
    async def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await self.driver.run(plan_fn(self.plans, *args, **kwargs))

    _unwrap_plan_annotation(operation, plan_fn)
    return operation


def blocking_operation(plan_fn: Callable[..., Plan[T]]) -> Callable[..., Any]:
    """A method running ``plan_fn(self.plans, ...)`` on ``self.driver`` (a BlockingDriver)."""

    @functools.wraps(plan_fn)
    def operation(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.driver.run(plan_fn(self.plans, *args, **kwargs))

    _unwrap_plan_annotation(operation, plan_fn)
    return operation
