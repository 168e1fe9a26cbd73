"""Client identity: the client id a client announces, and the UNIQ_KEY of each message it sends.

The client id is ``<ip>@<instance>`` (brokers key connections and consumer groups on it); a
UNIQ_KEY (§5.9) is 16 bytes in upper-case hex, the ``msgId`` a producer reports::

    ip(4) | pid(2) | class-loader hash(4) | ms since the start of the month(4) | counter(2)

e.g. ``0A0000050F3A1B2C3D4E`` + ``0001D4C0`` + ``00A1``: the first ten bytes are fixed per
generator (a random number stands in for Java's class-loader hash), the last six change per id.
"""

from __future__ import annotations

import datetime
import itertools
import os
import random
import socket
import time

from brokers.engine.common.clock import SYSTEM_CLOCK, Clock

__all__ = ["UniqIdGenerator", "build_client_id", "local_ip"]

_HEX_BYTE = tuple(f"{b:02X}" for b in range(256))


def local_ip() -> str:
    """The address RocketMQ clients put in their client id; 127.0.0.1 when there is no route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing interface
            addr: str = s.getsockname()[0]
            return addr
    except OSError:
        return "127.0.0.1"


def build_client_id(instance_name: str | None = None) -> str:
    """``<ip>@<instance>``, the instance defaulting to ``<pid>#<nanotime>`` as Java 4.9 does (§7.7)."""
    return f"{local_ip()}@{instance_name or f'{os.getpid()}#{time.monotonic_ns()}'}"


class UniqIdGenerator:
    """UNIQ_KEY values (§5.9): ip(4) + pid(2) + class-loader hash(4) + ms since month start(4) + counter(2)."""

    def __init__(self, ip: str | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        try:
            ip_bytes = socket.inet_aton(ip or local_ip())
        except OSError:
            ip_bytes = random.getrandbits(32).to_bytes(4, "big")
        fix = ip_bytes + (os.getpid() & 0xFFFF).to_bytes(2, "big") + random.getrandbits(32).to_bytes(4, "big")
        self._prefix = fix.hex().upper()
        self._clock = clock
        self._counter = itertools.count(random.getrandbits(16))
        self._month_start_ms, self._next_month_ms = self._month_bounds(clock.now_ms())
        self._head_ms = -1
        self._head = ""

    @staticmethod
    def _month_bounds(now_ms: int) -> tuple[int, int]:
        now = datetime.datetime.fromtimestamp(now_ms / 1000).astimezone()
        start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        nxt = (start + datetime.timedelta(days=32)).replace(day=1)
        return int(start.timestamp() * 1000), int(nxt.timestamp() * 1000)

    def next_id(self) -> str:
        now = self._clock.now_ms()
        if now != self._head_ms:  # the prefix and the time field are one string for the whole millisecond
            self._head = self._head_at(now)
            self._head_ms = now
        counter = next(self._counter) & 0xFFFF
        return self._head + _HEX_BYTE[counter >> 8] + _HEX_BYTE[counter & 0xFF]

    def _head_at(self, now: int) -> str:
        """The id up to its counter at ``now``: the fixed prefix and the ms since the month began."""
        if now >= self._next_month_ms or now < self._month_start_ms:
            self._month_start_ms, self._next_month_ms = self._month_bounds(now)
        return f"{self._prefix}{(now - self._month_start_ms) & 0xFFFFFFFF:08X}"
