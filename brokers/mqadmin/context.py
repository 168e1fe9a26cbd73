"""The context a subcommand runs in: the name server address, the clients (made on first use), output."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TypedDict

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.remoting.tls import TlsConfig


class Keys(TypedDict):
    """The ACL account every client of the command signs with (None: unsigned)."""

    access_key: str | None
    secret_key: str | None


class Context:
    """What a subcommand runs with: the name server address, the clients (made on first use), output."""

    def __init__(
        self,
        namesrv_addr: str,
        timeout_s: float,
        write: Callable[[str], None],
        *,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.namesrv_addr = namesrv_addr
        self.keys: Keys = {
            "access_key": access_key or None,
            "secret_key": secret_key or None,
        }  # the ACL account every client signs with
        self.tls = tls  # every client speaks TLS when set
        self.timeout_s = timeout_s
        self.write = write
        self._closers: list[Callable[[], None]] = []

    @cached_property
    def admin(self) -> BlockingMQAdminClient:
        client = BlockingMQAdminClient(self.namesrv_addr, timeout_s=self.timeout_s, tls=self.tls, **self.keys)
        self._closers.append(client.close)
        return client

    def producer(self, group: str) -> SimpleProducer:
        client = SimpleProducer(
            self.namesrv_addr, group, timeout_s=self.timeout_s, heartbeat_interval_s=None, tls=self.tls, **self.keys
        )
        self._closers.append(client.close)
        return client

    def puller(self, group: str) -> PullClient:
        client = PullClient(
            self.namesrv_addr, group, timeout_s=self.timeout_s, heartbeat_interval_s=None, tls=self.tls, **self.keys
        )
        self._closers.append(client.close)
        return client

    def close(self) -> None:
        for close in reversed(self._closers):
            close()
        self._closers.clear()
