"""MQClientManager: the client instances of this process, one per client id (RocketMQ's MQClientManager).

Producers and consumers with the same client id (``<ip>@<instance name>``) share one
:class:`~.client_instance.MQClientInstance`. :func:`acquire_client_instance` returns it, creating
and starting it on first use, and takes a reference; :meth:`MQClientInstance.release` gives the
reference back and stops the instance when it was the last.
"""

from __future__ import annotations

import os
import threading
import time

from brokers.engine.client.client_config import ClientConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.driver import parse_namesrv_addrs
from brokers.engine.client.identity import build_client_id
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["MQClientManager", "acquire_client_instance", "default_instance_name"]


def default_instance_name() -> str:
    """``<pid>#<nanotime>``, as Java 4.9 names a client whose instance name is left DEFAULT (§7.7).

    A name, not a time: the nanosecond counter only makes it unique within the process.
    """
    return f"{os.getpid()}#{time.monotonic_ns()}"


class MQClientManager:
    """The running instances by client id, with their reference counts (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._instances: dict[str, MQClientInstance] = {}
        self._refs: dict[str, int] = {}

    def acquire(
        self,
        namesrv_addr: str,
        instance_name: str,
        config: ClientConfig | None = None,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> MQClientInstance:
        """The running instance of client id ``<ip>@<instance_name>``, created and started when new.

        A second caller's ``config`` is ignored (the first one's timers run the instance), as in RocketMQ.
        An instance signs with one account: a second caller with other credentials (``signer``) gets
        ValueError rather than requests signed by someone else's account.
        """
        client_id = build_client_id(instance_name)
        with self._lock:
            instance = self._instances.get(client_id)
            if instance is not None and instance.signer != signer:
                raise ValueError(
                    f"client instance {client_id} already runs with other ACL credentials; "
                    "give this client another instance_name"
                )
            if instance is not None and instance.tls != tls:
                raise ValueError(
                    f"client instance {client_id} already runs with other TLS settings; "
                    "give this client another instance_name"
                )
            if instance is None:
                instance = MQClientInstance(
                    client_id,
                    parse_namesrv_addrs(namesrv_addr),
                    config or ClientConfig(),
                    registry=self,
                    signer=signer,
                    tls=tls,
                )
                instance._start()
                self._instances[client_id] = instance
            self._refs[client_id] = self._refs.get(client_id, 0) + 1
            return instance

    def release(self, instance: MQClientInstance) -> bool:
        """Drop one reference to ``instance``; True when it was the last (it is forgotten, and must stop)."""
        with self._lock:
            refs = self._refs.get(instance.client_id, 0) - 1
            if refs > 0:
                self._refs[instance.client_id] = refs
                return False
            self._refs.pop(instance.client_id, None)
            if self._instances.get(instance.client_id) is instance:
                del self._instances[instance.client_id]
            return True


MANAGER = MQClientManager()


def acquire_client_instance(
    namesrv_addr: str,
    instance_name: str,
    config: ClientConfig | None = None,
    signer: RequestSigner | None = None,
    tls: TlsConfig | None = None,
) -> MQClientInstance:
    """The process's instance of client id ``<ip>@<instance_name>`` (see :meth:`MQClientManager.acquire`).

    Each call takes a reference; give it back with :meth:`MQClientInstance.release`.
    """
    return MANAGER.acquire(namesrv_addr, instance_name, config, signer, tls)
