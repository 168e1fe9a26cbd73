"""ConnectionLimits: what one remoting server lets a peer hold, and the log line when a limit bites.

A server port is reachable by anyone who can route to it, so each resource a peer can make the
server hold is bounded (docs/security.md, "Connections and memory"):

- connections, in total and per remote address: at a cap, the oldest connection that has not
  authenticated (sent a request its port's guard let through) is closed to make room, idle ones
  first; only when every connection has authenticated is the new one refused. The per-address cap
  counts only connections that have not authenticated, so many sockets from one address (a NAT, a
  proxy, an attacker) never lock out the clients behind it;
- a connection that has sent nothing is not handed to the server at all for ``defer_accept_s``
  (the kernel's ``TCP_DEFER_ACCEPT``: RocketMQ's clients speak first), so silent sockets cost no
  accept, no connection objects and no close while they stay silent (``tls_listener.defer_accept``);
- a new connection must complete a request its port lets through within ``first_frame_deadline_s``;
- the bytes of frames being received, across all connections, stay within ``max_buffered_bytes``,
  and those of connections that have not authenticated within ``max_unauthenticated_bytes``
  (``budget.py``): past either, the connections holding the most are closed first, those not
  authenticated before the others;
- a frame's bytes must all arrive within ``frame_receive_deadline_s`` of its first byte (idle
  time between frames is not limited here; the idle watchdog closes silent connections);
- a header over ``max_header_size`` bytes, or JSON nested deeper than ``max_json_depth``, is
  answered with a protocol error (SYSTEM_ERROR) without being decoded;
- at most ``max_in_flight_per_connection`` requests of one connection run at once; the server
  stops reading that connection until one finishes (backpressure, nothing is refused);
- responses the peer does not read queue up to ``max_queued_response_bytes`` (one frame is
  always allowed, whatever its size); past that the connection is closed.

Clients pass no limits: a connection Gantry opens trusts its peer as before. Every refusal is
logged by a :class:`LimitLog` (one line per limit and peer address per ``interval_s``, with the
count of the refusals it did not log) so a flood cannot flood the log too.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from brokers.engine.common.json_depth import json_depth_exceeds
from brokers.engine.remoting.request_stats import request_stats

__all__ = [
    "DEFAULT_LIMITS",
    "ConnectionLimits",
    "LimitLog",
    "add_limit_arguments",
    "header_refusal",
    "limit_log",
    "limits_from_args",
]

_SERIALIZE_JSON = 0  # header_codec.SERIALIZE_JSON (this module is below the codec)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


# A sixteenth of the machine's memory, at least 256 MiB (a few maximal frames) and at most 2 GiB:
# room for every client's frames at once on a busy broker, and far from what takes a host down.
DEFAULT_BUFFERED_BYTES = min(max(_physical_memory() // 16, 256 << 20), 2 << 30)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The per-port limits; every field has a default safe for a public port."""

    # Total connections: well under a typical fd limit (RLIMIT_NOFILE is often 1024..65536);
    # clients keep one connection per broker, so thousands of clients fit.
    max_connections: int = 10_000
    # From one remote IP: a host runs a few clients (console, Celery, apps); 1000 leaves room
    # for a busy application host and stops one address from taking the whole port.
    max_connections_per_address: int = 1_000
    # A 16 MiB frame at 1 MiB/s takes 16 s; 30 s frees a trickled frame's buffer four times
    # sooner than the 120 s idle close did.
    frame_receive_deadline_s: float = 30.0
    # RocketMQ headers are a few hundred bytes (a pull's subscription expression is the big
    # one); 64 KiB bounds the decode cost of a header to well under a millisecond.
    max_header_size: int = 64 * 1024
    # A RocketMQ header nests 2 deep (header -> extFields); bodies (heartbeats, registrations)
    # about 6. 64 is generous and far below the interpreter's recursion limit.
    max_json_depth: int = 64
    # Requests of one connection running at once before the server stops reading it; Java
    # clients keep at most 65535 async calls but a broker runs far fewer per connection.
    max_in_flight_per_connection: int = 1024
    # Unread responses queued for one connection before it is closed: 16 MiB is one maximal
    # frame, about 64 full pull responses of 256 KiB.
    max_queued_response_bytes: int = 16 * 1024 * 1024
    # Frames being received plus responses queued, all connections together (budget.py).
    max_buffered_bytes: int = DEFAULT_BUFFERED_BYTES
    # The part of it connections that have not authenticated may hold: 128 MiB lets 32 clients
    # send a maximal 4 MiB message as their first request at once; 60 stalled 15 MiB frames
    # took a broker to 934 MB before this existed.
    max_unauthenticated_bytes: int = 128 * 1024 * 1024
    # A client sends its first request right after it connects (RocketMQ's clients connect on
    # their first call); 10 s is ample on a slow link and frees a silent socket soon.
    first_frame_deadline_s: float = 10.0
    # A socket that has sent nothing stays in the kernel this long (TCP_DEFER_ACCEPT, rounded up to
    # SYN-ACK retransmissions: 10 s is about 15 s) before the server accepts it; a client's first
    # bytes hand it over at once. 0 turns it off (a socket is accepted as soon as it connects).
    defer_accept_s: float = 10.0

    def __post_init__(self) -> None:
        for name in (
            "max_connections",
            "max_connections_per_address",
            "max_header_size",
            "max_json_depth",
            "max_in_flight_per_connection",
            "max_queued_response_bytes",
            "max_buffered_bytes",
            "max_unauthenticated_bytes",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("frame_receive_deadline_s", "first_frame_deadline_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if self.defer_accept_s < 0:
            raise ValueError("defer_accept_s must be 0 (off) or more")


DEFAULT_LIMITS = ConnectionLimits()
LIMIT_FIELDS = frozenset(f.name for f in dataclasses.fields(ConnectionLimits))


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--max-connections``, ``--frame-receive-deadline`` ... (one per ConnectionLimits field)."""
    group = parser.add_argument_group("limits on the port (defaults are safe for a public port)")
    for f in dataclasses.fields(ConnectionLimits):
        flag = "--" + f.name.removesuffix("_s").replace("_", "-")
        group.add_argument(
            flag,
            dest=f"limit_{f.name}",
            type=type(f.default),
            default=None,
            metavar="SECONDS" if f.name.endswith("_s") else "N",
            help=f"(default {f.default})",
        )


def limits_from_args(args: argparse.Namespace) -> ConnectionLimits:
    """The limits given by :func:`add_limit_arguments` flags, defaults for the others."""
    given = {
        name: getattr(args, f"limit_{name}")
        for name in LIMIT_FIELDS
        if getattr(args, f"limit_{name}", None) is not None
    }
    return dataclasses.replace(DEFAULT_LIMITS, **given)


class LimitLog:
    """Log each refusal by a limit, at most once per (limit, peer address) per ``interval_s``.

    The line logged after a quiet period tells how many refusals were not logged before it.
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 4096,
    ) -> None:
        self._log = logger
        self._interval_s = interval_s
        self._clock = clock
        self._max_keys = max_keys
        self._last: dict[tuple[str, str], tuple[float, int]] = {}  # key -> (logged at, suppressed since)

    def refused(self, limit: str, peer: str, message: str, *args: object) -> bool:
        """Log ``message % args`` (prefixed with the limit's name) unless logged recently; True if logged.
        Every refusal is counted (``request_stats``, for ``/metrics``), logged or not."""
        request_stats.refused(limit)
        host = peer.rsplit(":", 1)[0]
        key = (limit, host)
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last[0] < self._interval_s:
            self._last[key] = (last[0], last[1] + 1)
            return False
        if len(self._last) >= self._max_keys:  # a flood from many addresses: forget the oldest
            for old in sorted(self._last, key=lambda k: self._last[k][0])[: self._max_keys // 2]:
                del self._last[old]
        suppressed = last[1] if last is not None else 0
        self._last[key] = (now, 0)
        more = f" ({suppressed} more from {host} not logged)" if suppressed else ""
        self._log.warning("limit %s: " + message + more, limit, *args)
        return True


limit_log = LimitLog(logging.getLogger("brokers.engine.remoting"))  # shared by every port of the process


def header_refusal(data: bytes, limits: ConnectionLimits) -> str | None:
    """Why a frame's header (``data`` = header word, header, body) breaks a limit, or None.

    Checked before decoding: the size from the header word, the JSON nesting by a linear scan
    of at most ``max_header_size`` bytes.
    """
    if len(data) < 4:
        return None  # the decoder answers it
    word = int.from_bytes(data[:4], "big")
    header_length = word & 0xFFFFFF
    if header_length > limits.max_header_size:
        return f"header of {header_length} bytes exceeds the {limits.max_header_size}-byte limit"
    if (word >> 24) & 0xFF == _SERIALIZE_JSON and json_depth_exceeds(
        data[4 : 4 + header_length], limits.max_json_depth
    ):
        return f"JSON header nested deeper than {limits.max_json_depth}"
    return None
