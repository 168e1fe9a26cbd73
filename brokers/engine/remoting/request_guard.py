"""RequestGuard and RequestSigner: where a security layer meets the remoting protocol.

Remoting knows no accounts; it offers two seams and the ACL (``brokers.engine.acl``) fills them:

- a :class:`RequestGuard` given to a :class:`~brokers.engine.remoting.server.RemotingServer` sees
  every request a peer sends, before any handler is looked up. When it returns a remark, the
  request is answered ``NO_PERMISSION`` (16) with that remark (nothing for a oneway request) and
  nothing runs: no processor, no ``REQUEST_CODE_NOT_SUPPORTED`` for a code without one.
- a :class:`RequestSigner` given to a :class:`~brokers.engine.remoting.client.RemotingClient`
  signs every request just before it is encoded, so every path of every client signs, resends
  included (RocketMQ's ``RPCHook.doBeforeRequest``).

Requests a server sends back over a client's connection (NOTIFY_CONSUMER_IDS_CHANGED, ...) are
neither guarded nor signed, as in RocketMQ.
"""

from __future__ import annotations

from typing import Protocol

from brokers.engine.remoting.command import RemotingCommand


class RequestGuard(Protocol):
    def refusal(self, request: RemotingCommand, remote_addr: str) -> str | None:
        """None when ``request`` from ``remote_addr`` (``ip:port``) may run; else the refusal's remark."""
        ...


class RequestSigner(Protocol):
    def sign_request(self, command: RemotingCommand) -> RemotingCommand:
        """Add credentials and a signature to ``command`` in place (called last, before encoding)."""
        ...
