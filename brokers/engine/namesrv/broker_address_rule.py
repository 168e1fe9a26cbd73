"""BrokerAddressRule: may the connection a REGISTER_BROKER came over name this ``brokerAddr``?

RocketMQ 4.x's name server takes any address from anyone, so any peer could point a broker name's
route at a host of its choosing. Gantry ties the address to the peer (route-hijack protection,
docs/namesrv-guard.md):

- **A remote peer** may register only an address on its own host: the ``brokerAddr`` host is the
  peer's IP (the port may differ: the peer's port is an ephemeral client port). IPs are compared
  as addresses (``::ffff:10.0.0.1`` is ``10.0.0.1``; IPv6 in any spelling).
- **A peer on this machine** (a loopback peer, or one connecting from an address this machine
  holds) may register any address of this machine: a loopback address, ``localhost``, or an IP
  a socket can bind here (a broker listening on ``0.0.0.0`` advertises its LAN IP while reaching
  a name server on ``127.0.0.1``). The bind check is a syscall, cached per IP.
- **Host aliases** (``NamesrvConfig.broker_host_aliases``, ``--broker-host-alias PEER=BROKER``,
  default none): a broker behind NAT whose ``brokerIP1`` (what clients must dial) is not the
  address the name server sees it connect from. Each alias lets registrations from ``PEER`` name
  ``BROKER`` (an IP or a host name). There is no switch trusting every forwarded address: a broker
  not covered by an alias registers from its own address.

Host names other than ``localhost`` in ``brokerAddr`` are refused unless an alias names them (the
name server does not resolve names on its event loop, and a name could resolve anywhere).
``haServerAddr`` is not checked: a Java broker's ``brokerIP2`` may be another network's address,
and a slave learns its master's HA address only from a registration that passed this rule.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LOCAL_CACHE_MAX = 256  # distinct IPs remembered by the bind check; more are checked again each time


class BrokerAddressError(ValueError):
    """A ``brokerAddr`` that is not ``host:port``, or a malformed alias."""


def split_addr(addr: str) -> tuple[str, int]:
    """``host:port``, ``[v6]:port`` or RocketMQ's ``v6:port`` -> (host, port); BrokerAddressError when not."""
    text = (addr or "").strip()
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BrokerAddressError(f"brokerAddr {addr!r} is not host:port with a port in 1..65535")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or any(ch.isspace() or ch in "/[]@" for ch in host):
        raise BrokerAddressError(f"brokerAddr {addr!r} has no usable host")
    return host, int(port_text)


def ip_of(host: str) -> IPAddress | None:
    """The IP a host text names (IPv4-mapped IPv6 as IPv4, zone ids dropped, ``localhost`` as 127.0.0.1)."""
    if host.lower() == "localhost":
        return ipaddress.IPv4Address("127.0.0.1")
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse_host_alias(text: str) -> tuple[str, str]:
    """``PEER_HOST=BROKER_HOST`` -> (peer IP text, broker host); the peer side must be an IP."""
    peer, sep, broker = (text or "").partition("=")
    peer, broker = peer.strip(), broker.strip()
    if not sep or not peer or not broker:
        raise BrokerAddressError(f"broker host alias {text!r} is not PEER_HOST=BROKER_HOST")
    peer_ip = ip_of(peer)
    if peer_ip is None:
        raise BrokerAddressError(f"broker host alias {text!r}: {peer!r} is not an IP address")
    return str(peer_ip), broker


class LocalAddresses:
    """Which IPs this machine holds: loopback ones, and any a socket can bind (remembered)."""

    def __init__(self) -> None:
        self._known: dict[IPAddress, bool] = {}

    def __call__(self, ip: IPAddress) -> bool:
        if ip.is_loopback:
            return True
        known = self._known.get(ip)
        if known is None:
            known = _can_bind(ip)
            if len(self._known) < _LOCAL_CACHE_MAX:
                self._known[ip] = known
        return known


def _can_bind(ip: IPAddress) -> bool:
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((str(ip), 0))
    except OSError:
        return False
    return True


class BrokerAddressRule:
    """``refusal(broker_addr, peer_addr)``: None when the peer may register the address, else why not."""

    def __init__(
        self, aliases: Iterable[str | tuple[str, str]] = (), is_local: Callable[[IPAddress], bool] | None = None
    ) -> None:
        self._aliases: dict[IPAddress, set[str]] = {}
        for alias in aliases:
            peer, broker = parse_host_alias(alias) if isinstance(alias, str) else alias
            peer_ip = ip_of(peer)
            if peer_ip is None:
                raise BrokerAddressError(f"broker host alias {peer}={broker}: {peer!r} is not an IP address")
            self._aliases.setdefault(peer_ip, set()).add(_host_key(broker))
        self._is_local = is_local or LocalAddresses()

    def refusal(self, broker_addr: str, peer_addr: str) -> str | None:
        try:
            host, _ = split_addr(broker_addr)
        except BrokerAddressError as exc:
            return str(exc)
        peer_ip = ip_of(peer_addr.rpartition(":")[0].strip("[]"))  # channels render peers as host:port
        if peer_ip is None:
            return (
                f"the connecting peer's address {peer_addr!r} is unknown, so brokerAddr {broker_addr} cannot be checked"
            )
        ip = ip_of(host)
        if ip is not None and ip == peer_ip:
            return None
        if _host_key(host) in self._aliases.get(peer_ip, ()):
            return None
        if ip is not None and self._is_local(peer_ip) and self._is_local(ip):
            return None  # a process on this machine naming an address of this machine
        return (
            f"brokerAddr {broker_addr} is not on the connecting peer's host {peer_addr}: a broker registers "
            "from its own address (a broker behind NAT needs a --broker-host-alias PEER=BROKER on the name server)"
        )


def _host_key(host: str) -> str:
    ip = ip_of(host)
    return str(ip) if ip is not None else host.lower()
