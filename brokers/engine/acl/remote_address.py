"""RemoteAddressPattern: a ``whiteRemoteAddress`` / ``globalWhiteRemoteAddresses`` entry and what it matches.

The forms RocketMQ's ``RemoteAddressStrategyFactory`` accepts (4.9), all read here::

    (empty)                         matches nothing (an account with no white address)
    *   *.*.*.*   *:*:*:*:*:*:*:*   matches every peer
    192.168.0.1   ::1               one address (IPv6 in any spelling: compared as addresses)
    192.168.0.1,192.168.0.2         a list of whole addresses
    192.168.0.{1,2}                 a list of last parts; IPv6: 1050::5:600:300c:{1,2}
    192.168.0.*   192.168.*.*       wildcard parts
    192.168.0.1-100  192.1-10.*.*   decimal ranges (IPv4 0..255)
    1050::5:600:300c:1-ff           hex ranges and * in IPv6 groups; 1050::300c:1-20:*
    1050:5:600:300c:3261:*          IPv6 with fewer than 8 groups, no '::', ending in *: a prefix

Each IPv4 part or IPv6 group of a wildcard pattern is matched on its own. RocketMQ instead checks the
parts up to its first wildcard or range and ignores any exact part after it, so ``10.1-5.0.7`` also
matches 10.3.9.9 there; here it matches only x.1-5.0.7, the narrower reading of what was written.
Malformed patterns raise :class:`AddressPatternError` naming the pattern (a range with start > end,
a part out of 0..255, a list item that is not an address, text that is no address at all).

Peers are compared as :mod:`ipaddress` objects: an IPv4-mapped IPv6 peer (``::ffff:10.0.0.1``) is
its IPv4 address, a zone id (``fe80::1%eth0``) is dropped.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_MATCH_ALL = frozenset({"*", "*.*.*.*", "*:*:*:*:*:*:*:*"})


class AddressPatternError(ValueError):
    """A white-address pattern RocketMQ's forms do not cover."""


@dataclass(frozen=True, slots=True)
class RemoteAddressPattern:
    """One parsed pattern. ``text`` is what the file said; the other fields are its meaning."""

    text: str
    match_all: bool = False
    addresses: frozenset[IPAddress] = frozenset()  # exact addresses and lists
    ranges: tuple[tuple[int, int], ...] = ()  # per part (4 for IPv4, 8 for IPv6), inclusive
    ipv6: bool = False

    @classmethod
    def parse(cls, text: str | None) -> RemoteAddressPattern:
        text = (text or "").strip()
        if not text:
            return cls("")
        if text in _MATCH_ALL:
            return cls(text, match_all=True)
        if text.endswith("}"):
            return cls(text, addresses=frozenset(_brace_list(text)))
        if "," in text:
            return cls(text, addresses=frozenset(_address(item.strip(), text) for item in text.split(",")))
        if "*" in text or "-" in text:
            ipv6 = ":" in text
            return cls(text, ranges=_ipv6_ranges(text) if ipv6 else _ipv4_ranges(text), ipv6=ipv6)
        return cls(text, addresses=frozenset({_address(text, text)}))

    def matches(self, host: str | None) -> bool:
        """Whether the peer ``host`` (an IP literal, no port) is covered by this pattern."""
        if self.match_all:
            return True
        if not self.addresses and not self.ranges:
            return False  # the empty pattern: nothing to compare, so no address to parse
        peer = peer_address(host)
        if peer is None:
            return False
        if self.addresses:
            return peer in self.addresses
        if not self.ranges or (peer.version == 6) != self.ipv6:
            return False
        parts = _parts(peer)
        return all(low <= part <= high for part, (low, high) in zip(parts, self.ranges))


def peer_address(host: str | None) -> IPAddress | None:
    """The peer as an address: brackets and a zone id dropped, IPv4-mapped IPv6 as IPv4; None if not an IP."""
    if not host:
        return None
    host = host.strip().strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def split_host(remote_addr: str | tuple[Any, ...] | None) -> str | None:
    """The host of a peer address: ``(host, port, ...)`` from asyncio, ``host:port``, ``[v6]:port`` or a bare host."""
    if remote_addr is None:
        return None
    if isinstance(remote_addr, tuple):
        return str(remote_addr[0]) if remote_addr else None
    text = remote_addr.strip().lstrip("/")
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text[1:]
    if text.count(":") == 1:
        return text.split(":", 1)[0]
    if peer_address(text) is not None:
        return text  # a bare IPv6 literal
    return text.rsplit(":", 1)[0] if ":" in text else text  # RocketMQ's "v6:port" without brackets


def _address(text: str, pattern: str) -> IPAddress:
    address = peer_address(text)
    if address is None or text != text.strip() or "%" in text:
        raise AddressPatternError(f"malformed address pattern {pattern!r}: {text!r} is not an IP address")
    return address


def _brace_list(text: str) -> list[IPAddress]:
    head, brace, tail = text.partition("{")
    items = tail[:-1].split(",") if brace else []
    if (
        not brace
        or "{" in tail
        or "}" in tail[:-1]
        or not head
        or head[-1] not in ".:"
        or not any(i.strip() for i in items)
    ):
        raise AddressPatternError(
            f"malformed address pattern {text!r}: expected a.b.c.{{1,2}} or an IPv6 prefix ending in ':{{1,2}}'"
        )
    if head[-1] == "." and head.count(".") != 3:
        raise AddressPatternError(
            f"malformed address pattern {text!r}: a list {{...}} replaces the last of four IPv4 parts"
        )
    return [_address(head + item.strip(), text) for item in items]


def _ipv4_ranges(text: str) -> tuple[tuple[int, int], ...]:
    parts = text.split(".")
    if len(parts) != 4:
        raise AddressPatternError(f"malformed address pattern {text!r}: an IPv4 pattern has four parts")
    return tuple(_part_range(part, text, base=10, maximum=255) for part in parts)


def _ipv6_ranges(text: str) -> tuple[tuple[int, int], ...]:
    if text.count("::") > 1 or ":::" in text:
        raise AddressPatternError(f"malformed address pattern {text!r}: '::' may appear once")
    if "::" in text:
        left, right = (side.split(":") if side else [] for side in text.split("::"))
        missing = 8 - len(left) - len(right)
        if missing < 1:
            raise AddressPatternError(f"malformed address pattern {text!r}: more than 8 IPv6 groups")
        groups = left + ["0"] * missing + right
    else:
        groups = text.split(":")
        if len(groups) < 8 and groups[-1] == "*":
            groups += ["*"] * (8 - len(groups))  # "1050:5:600:300c:3261:*": a prefix
    if len(groups) != 8:
        raise AddressPatternError(f"malformed address pattern {text!r}: an IPv6 pattern has 8 groups (or '::')")
    return tuple(_part_range(group, text, base=16, maximum=0xFFFF) for group in groups)


def _part_range(part: str, pattern: str, *, base: int, maximum: int) -> tuple[int, int]:
    """One part: a number, ``*`` (all), or ``low-high`` (inclusive, low <= high)."""
    if part == "*":
        return 0, maximum
    low_text, dash, high_text = part.partition("-")
    low = _number(low_text, pattern, base, maximum)
    high = _number(high_text, pattern, base, maximum) if dash else low
    if low > high:
        raise AddressPatternError(f"malformed address pattern {pattern!r}: the range {part} starts after it ends")
    return low, high


def _number(text: str, pattern: str, base: int, maximum: int) -> int:
    digits = "0123456789" if base == 10 else "0123456789abcdefABCDEF"
    if not text or len(text) > (3 if base == 10 else 4) or any(c not in digits for c in text):
        raise AddressPatternError(f"malformed address pattern {pattern!r}: {text!r} is not a part of an address")
    value = int(text, base)
    if value > maximum:
        raise AddressPatternError(f"malformed address pattern {pattern!r}: {text} is out of range (max {maximum})")
    return value


def _parts(address: IPAddress) -> tuple[int, ...]:
    packed = address.packed
    if address.version == 4:
        return tuple(packed)
    return tuple(int.from_bytes(packed[i : i + 2], "big") for i in range(0, 16, 2))
