"""The console's own producer: test messages and dead-letter resends, sent as a client would.

It shares the admin client's name servers, timeout and connections (and so its ACL signature and
TLS), sends no heartbeats (it lives for one request), and is closed by its caller.
"""

from __future__ import annotations

from brokers.engine.client.simple_producer import SimpleProducer
from brokers.gateway.client import get_admin_client

__all__ = ["SimpleProducer", "console_producer"]


def console_producer(group: str) -> SimpleProducer:
    """A producer of group ``group`` over the shared admin client's connections; the caller closes it."""
    client = get_admin_client()
    return SimpleProducer(
        client.namesrv_addrs,
        group,
        timeout_s=client.timeout_s,
        remoting=client.driver.remoting,
        heartbeat_interval_s=None,
    )
