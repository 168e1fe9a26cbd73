"""RouteWriteRule: which connection may act on a registered broker through the name server.

RocketMQ 4.x's name server lets any peer unregister any broker (104), refresh its liveness (322),
take or give back its write permission (205, 327), delete topics from its routes (216) and write
KV config (100, 102). Gantry (route-hijack protection, docs/namesrv-guard.md):

- **With the ACL on** (``--acl-file``) every one of these codes is admin-only in
  ``acl/request_rules.py``, and the remoting dispatch has checked the request before it gets here:
  a request that reached the handler is an operator's (an admin account's signature, or an address
  the ACL file white-lists, which RocketMQ treats as trusted). It may act on any broker. Gantry's
  brokers sign with an admin account too (``acl/broker_credential.py``).
- **With the ACL off** there is no credential to check, so the connection decides:

  * the broker's own codes, UNREGISTER_BROKER (104) and QUERY_DATA_VERSION (322), only over the
    connection that registered ``brokerAddr`` (no operator tool sends them; the broker uses the
    connection it registers over). A ``brokerAddr`` nobody registered has nothing to protect;
  * the operator's codes, WIPE (205) / ADD (327) _WRITE_PERM_OF_BROKER, DELETE_TOPIC_IN_NAMESRV
    (216), PUT_KV_CONFIG (100) and DELETE_KV_CONFIG (102): from a peer on this machine (loopback,
    or an address this machine holds; ``mqadmin``, the console and ``make test`` on one host), or
    over a connection that registered every broker the request touches (205/327: the named
    broker; 216: each broker holding the topic's queues; KV writes touch no broker, so remote
    peers are refused). With ``NamesrvConfig.loopback_route_writes = False``
    (``--strict-route-writes``) peers on this machine are held to the same connection rule.

  A name server listening on a routable address runs without the ACL only with ``--no-acl``, so
  there remote operators need the ACL (an admin account) for these codes.

A refusal is SYSTEM_ERROR with a remark naming the code, the broker and who holds it, and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from brokers.engine.namesrv.broker_address_rule import IPAddress, LocalAddresses, ip_of
from brokers.engine.namesrv.route_info import RouteInfoManager
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode

_HOW = "only the connection that registered it, or (with the ACL on) an admin account, may act on it"


def code_name(code: int) -> str:
    try:
        return f"{RequestCode(code).name} ({code})"
    except ValueError:
        return str(code)


class RouteWriteRule:
    """``*_refusal(...)`` -> None when the request may run, else the remark; see the module docstring."""

    def __init__(
        self,
        route_info: RouteInfoManager,
        *,
        acl_on: bool,
        loopback_route_writes: bool = True,
        is_local: Callable[[IPAddress], bool] | None = None,
    ) -> None:
        self.route_info = route_info
        self.acl_on = acl_on
        self.loopback_route_writes = loopback_route_writes
        self._is_local = is_local or LocalAddresses()

    def broker_addr_refusal(self, code: int, broker_addr: str, ctx: ChannelContext) -> str | None:
        """104 and 322: only the connection that registered ``broker_addr`` (ACL off)."""
        if self.acl_on:
            return None
        held = self.route_info.registration_at(broker_addr)
        if held is None or held.channel_key == ctx.id:
            return None
        return (
            f"{code_name(code)} for {broker_addr} from {ctx.remote_addr} refused: {broker_addr} was registered over "
            f"another connection (peer {held.remote_addr or 'unknown'}); {_HOW}"
        )

    def broker_names_refusal(self, code: int, broker_names: list[str], ctx: ChannelContext) -> str | None:
        """205, 327, 216: a peer on this machine, or the connection of every named broker (ACL off)."""
        if self.acl_on or self._operator_peer(ctx):
            return None
        for name in broker_names:
            channels = self.route_info.registration_channels_of(name)
            if channels and ctx.id not in channels:
                return (
                    f"{code_name(code)} acting on {name} from {ctx.remote_addr} refused: {name} was registered over "
                    f"another connection; {_HOW}"
                )
        return None

    def operator_refusal(self, code: int, ctx: ChannelContext) -> str | None:
        """100, 102: a peer on this machine (ACL off); they touch no broker, so no connection qualifies."""
        if self.acl_on or self._operator_peer(ctx):
            return None
        return (
            f"{code_name(code)} from {ctx.remote_addr} refused: with the ACL off only a peer on the name server's "
            "machine may write KV config; turn the ACL on and sign with an admin account"
        )

    def _operator_peer(self, ctx: ChannelContext) -> bool:
        if not self.loopback_route_writes:
            return False
        ip = ip_of(ctx.remote_addr.rpartition(":")[0].strip("[]"))
        return ip is not None and self._is_local(ip)
