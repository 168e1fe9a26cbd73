"""The name server address list: RocketMQ's ``NAMESRV_ADDR`` / ``namesrvAddr``, ``host:port;host:port``.

Brokers (``BrokerStartup`` checks each entry with ``string2SocketAddress``) and clients
(``updateNameServerAddressList``) both split the setting on ``;``. One rule here for both.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["InvalidNamesrvAddrError", "parse_namesrv_addrs"]


class InvalidNamesrvAddrError(ValueError):
    """A name server list that is empty where one is needed, or an entry that is not host:port."""


def parse_namesrv_addrs(value: str | Iterable[str] | None, *, required: bool = True) -> tuple[str, ...]:
    """Return the ``host:port`` entries of ``value``, a ``;``-separated string or a sequence of them.

    Whitespace around an entry is dropped; empty entries (``a:1;;b:2``, a trailing ``;``) are
    skipped, and an address listed twice is kept once, first place wins. Each entry must be
    ``host:port`` with a port from 1 to 65535 and a host without whitespace, ``,`` or ``;``
    (RocketMQ separates with ``;`` only, so ``a:1,b:2`` is refused rather than read as one host).
    ``None`` is an empty list. ``required`` (clients): an empty list raises; brokers may start
    with none (``required=False``) and run unregistered.
    """
    if value is None:
        items: list[str] = []
    elif isinstance(value, str):
        items = value.split(";")
    else:
        items = [part for entry in value for part in str(entry).split(";")]
    addrs = tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
    if required and not addrs:
        raise InvalidNamesrvAddrError("no name server address given")
    for addr in addrs:
        host, sep, port = addr.rpartition(":")
        if not sep or not host or any(c.isspace() or c in ",;" for c in host):
            raise InvalidNamesrvAddrError(f"name server address {addr!r} is not host:port")
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise InvalidNamesrvAddrError(f"name server address {addr!r} is not host:port (port 1..65535)")
    return addrs
