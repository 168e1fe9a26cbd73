"""Store and born hosts as record bytes, and offset message ids.

A host is stored as its address bytes followed by the port as a 4-byte big-endian int: 8 bytes
for IPv4, 20 for IPv6. An offset message id is the store host bytes followed by the 8-byte
physical offset, rendered as upper-case hex: 32 characters for an IPv4 store host, 56 for IPv6.

Decoding a pull body turns two hosts per record into text, so :func:`bytes_to_host` keeps the
text of the hosts it has seen (a broker's records carry a handful of distinct hosts).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache

HOST_V4_SIZE = 8  # 4 address bytes + 4-byte port
HOST_V6_SIZE = 20  # 16 address bytes + 4-byte port
_HOST_CACHE_MAX = 4096  # distinct hosts remembered by bytes_to_host (producer connections)

_host_texts: dict[bytes, str] = {}
_host_hex: dict[bytes, str] = {}


@lru_cache(maxsize=4096)
def host_to_bytes(host: str) -> bytes:
    """Encode ``"ip:port"`` as address bytes + 4-byte port (8 bytes IPv4, 20 bytes IPv6).

    Accepts ``"[::1]:10911"`` and ``"::1:10911"`` (last colon separates the port) and a leading
    ``/`` as Java prints socket addresses. IPv4-mapped IPv6 addresses become 4-byte IPv4.
    """
    text = host.strip().lstrip("/")
    addr_text, sep, port_text = text.rpartition(":")
    if not sep:
        raise ValueError(f"host {host!r} is not 'ip:port'")
    if addr_text.startswith("[") and addr_text.endswith("]"):
        addr_text = addr_text[1:-1]
    try:
        addr = ipaddress.ip_address(addr_text)
        port = int(port_text)
    except ValueError as exc:
        raise ValueError(f"host {host!r} is not 'ip:port' with a literal IP address") from exc
    if not 0 <= port <= 0xFFFF:
        raise ValueError(f"host {host!r} has a port out of range")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.packed + port.to_bytes(4, "big")


def _render_host(data: bytes) -> str:
    if len(data) == HOST_V4_SIZE:
        return f"{socket.inet_ntoa(data[:4])}:{int.from_bytes(data[4:], 'big', signed=True)}"
    if len(data) == HOST_V6_SIZE:
        addr = ipaddress.IPv6Address(data[:16])
        port = int.from_bytes(data[16:], "big", signed=True)
        if addr.ipv4_mapped is not None:
            return f"{addr.ipv4_mapped}:{port}"
        return f"[{addr.compressed}]:{port}"
    raise ValueError(f"a host is 8 or 20 bytes, got {len(data)}")


def bytes_to_host(data: bytes | bytearray | memoryview) -> str:
    """Decode address bytes + 4-byte port (8 or 20 bytes) to ``"ip:port"`` (``"[v6]:port"``).

    >>> bytes_to_host(bytes([192, 168, 1, 10, 0, 0, 0x2A, 0x9F]))
    '192.168.1.10:10911'
    """
    key = data if type(data) is bytes else bytes(data)
    text = _host_texts.get(key)
    if text is None:
        text = _render_host(key)
        if len(_host_texts) >= _HOST_CACHE_MAX:
            _host_texts.clear()
        _host_texts[key] = text
    return text


def offset_msg_id_of(store_host: bytes, physical_offset: int) -> str:
    """Return the offset message id of a record from its store host bytes and offset."""
    prefix = _host_hex.get(store_host)
    if prefix is None:
        prefix = store_host.hex().upper()
        if len(_host_hex) >= _HOST_CACHE_MAX:
            _host_hex.clear()
        _host_hex[store_host] = prefix
    if physical_offset >= 0:
        return f"{prefix}{physical_offset:016X}"
    return prefix + physical_offset.to_bytes(8, "big", signed=True).hex().upper()


def create_offset_msg_id(store_host: str | bytes, physical_offset: int) -> str:
    """Return the offset message id: store host bytes + 8-byte offset, upper-case hex.

    >>> create_offset_msg_id("192.168.1.10:10911", 123456)
    'C0A8010A00002A9F000000000001E240'
    """
    host_b = host_to_bytes(store_host) if isinstance(store_host, str) else bytes(store_host)
    return offset_msg_id_of(host_b, physical_offset)


def parse_offset_msg_id(msg_id: str) -> tuple[str, int]:
    """Return (store host ``"ip:port"``, physical offset) from an offset message id.

    32 hex characters mean an IPv4 store host, 56 an IPv6 one; anything else is a ValueError.
    """
    text = msg_id.strip()
    if len(text) not in (32, 56):
        raise ValueError(f"an offset message id has 32 or 56 hex characters, got {len(text)}")
    try:
        raw = bytes.fromhex(text)
    except ValueError as exc:
        raise ValueError(f"offset message id {msg_id!r} is not hex") from exc
    host_len = HOST_V4_SIZE if len(raw) == 16 else HOST_V6_SIZE
    return bytes_to_host(raw[:host_len]), int.from_bytes(raw[host_len:], "big", signed=True)
