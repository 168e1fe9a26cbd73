"""ReplayCache: refuse a Gantry-signed request that was seen before or signed too far from now.

RocketMQ 4.x's signature covers the request and nothing about when it was made, so a captured signed
request verifies forever. Gantry's signers (``client_hook.py``) add two signed ext fields,
``GantryTimestamp`` and ``GantryNonce`` (``signature.py``). After the signature of a request is
verified, :meth:`ReplayCache.check` takes, in order:

1. neither field (a RocketMQ 4.x client, Apache's ``AclClientRPCHook``): accepted as before, unless
   the account or the whole file requires replay protection
   (:class:`~brokers.engine.acl.plain_acl_config.ReplayProtection`);
2. one field without the other: refused (Gantry's signers send both);
3. a timestamp that is not a number of milliseconds, a nonce that is not 32 lowercase hex digits: refused;
4. ``|timestamp - now| > window``: refused ("request timestamp T is outside the ±120 s window");
5. a nonce the cache holds: refused ("replayed request: nonce already seen");
6. a timestamp at or below the *floor* (below): refused;
7. else the nonce is remembered until its timestamp leaves the window, and the request goes on to
   the permission checks.

Only requests whose signature verified reach the cache, so only holders of a secret can fill it.

**The floor.** Whenever the cache forgets a nonce (its timestamp left the window, or the cache was
full and it was the oldest) the floor rises to that nonce's timestamp. Hence the invariant: *every
nonce accepted with a timestamp above the floor is in the cache*, and a replay is refused whatever
the cache went through. A full cache (``nonce_cache_max``) evicts its oldest entry instead of refusing
new nonces, because

- refusing new nonces would let any one account (a demo account will do) lock every Gantry-signed
  request out for a whole window by sending ``nonce_cache_max`` signed requests, and
- evicting without a floor would let an evicted request be replayed: flood the cache from a small
  account, then replay a captured admin request.

With the floor, pressure shrinks the window from below: fresh requests keep passing; a request
signed before the floor (slow on the way, or from a clock that is behind) is refused with a remark
saying so, and its client signs it again. Only a request older than everything a full cache holds is
refused as "the replay cache is full".

**At start** the floor is the server's clock: the cache lives in memory, and a restarted server must
not accept again what was captured within the last window. A signer whose clock runs ahead of the
server's by *s* seconds leaves its last *s* seconds before a restart replayable; keep clocks in sync.

Expiry and step 4 use the same bound (``timestamp < now - window``), so a forgotten nonce cannot pass
the window check either, and a window made longer by a reload reopens nothing (the floor).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from heapq import heappop, heappush

from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.plain_acl_config import ReplayProtection
from brokers.engine.acl.signature import GANTRY_NONCE, GANTRY_TIMESTAMP
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock

_NONCE = re.compile(r"[0-9a-f]{32}")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")  # ms since the epoch: 13 digits until the year 2286


class ReplayCache:
    """The nonces of accepted Gantry-signed requests, bounded in time and number (see the module docstring)."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._seen: set[str] = set()
        self._by_time: list[tuple[int, str]] = []  # a heap of (signed ms, nonce): the oldest first
        self._floor = clock.now_ms() - 1  # requests signed before the cache existed cannot be checked
        self._lock = threading.Lock()  # a server checks on its loop; a test or a second loop may share it

    def __len__(self) -> int:
        return len(self._seen)

    @property
    def floor(self) -> int:
        """Requests signed at or before this (ms since the epoch) are refused."""
        return self._floor

    def check(
        self, ext_fields: Mapping[str, str], *, access_key: str, settings: ReplayProtection, required: bool
    ) -> None:
        """Return when the request may go on; raise AclRefused when it is replayed, stale or malformed."""
        timestamp = ext_fields.get(GANTRY_TIMESTAMP)
        nonce = ext_fields.get(GANTRY_NONCE)
        if timestamp is None and nonce is None:
            if required:
                raise AclRefused(
                    f"accessKey {access_key} requires replay protection: sign with {GANTRY_TIMESTAMP} and "
                    f"{GANTRY_NONCE} (Gantry's clients do; RocketMQ 4.x clients cannot: use another account)"
                )
            return
        if timestamp is None or nonce is None:
            present, absent = (
                (GANTRY_NONCE, GANTRY_TIMESTAMP) if timestamp is None else (GANTRY_TIMESTAMP, GANTRY_NONCE)
            )
            raise AclRefused(
                f"request carries {present} without {absent}: Gantry's signers send both (accessKey {access_key})"
            )
        if not isinstance(timestamp, str) or not _TIMESTAMP.fullmatch(timestamp):
            raise AclRefused(f"{GANTRY_TIMESTAMP} must be milliseconds since the epoch (accessKey {access_key})")
        if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
            raise AclRefused(f"{GANTRY_NONCE} must be 32 lowercase hex digits (accessKey {access_key})")
        signed_ms = int(timestamp)
        window_ms = settings.window_s * 1000
        with self._lock:
            now = self._clock.now_ms()
            if abs(now - signed_ms) > window_ms:
                raise AclRefused(
                    f"request timestamp {signed_ms} is outside the ±{settings.window_s} s window of the "
                    f"server's clock ({now}); check the signer's clock (accessKey {access_key})"
                )
            self._expire(now - window_ms)
            if nonce in self._seen:
                raise AclRefused(f"replayed request: nonce already seen (accessKey {access_key})")
            self._refuse_at_or_below_floor(signed_ms, access_key)
            if len(self._seen) >= settings.nonce_cache_max:
                if signed_ms <= self._by_time[0][0]:
                    raise AclRefused(
                        f"the replay cache is full ({len(self._seen)} nonces) and request timestamp {signed_ms} "
                        f"is not newer than any it holds: sign the request again (accessKey {access_key})"
                    )
                while len(self._seen) >= settings.nonce_cache_max:
                    self._forget_oldest()
                self._refuse_at_or_below_floor(signed_ms, access_key)
            heappush(self._by_time, (signed_ms, nonce))
            self._seen.add(nonce)

    def _refuse_at_or_below_floor(self, signed_ms: int, access_key: str) -> None:
        if signed_ms <= self._floor:
            raise AclRefused(
                f"request timestamp {signed_ms} is not after {self._floor}, the oldest signing time this server "
                "can still check for replays (its replay cache was full, or it started later): sign the "
                f"request again (accessKey {access_key})"
            )

    def _expire(self, oldest_ms: int) -> None:
        """Forget the nonces signed before ``oldest_ms``: the window check refuses them now."""
        by_time = self._by_time
        while by_time and by_time[0][0] < oldest_ms:
            self._forget_oldest()

    def _forget_oldest(self) -> None:
        signed_ms, nonce = heappop(self._by_time)
        self._seen.discard(nonce)
        if signed_ms > self._floor:
            self._floor = signed_ms
