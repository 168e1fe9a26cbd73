"""AclGuard: the plain ACL as the remoting server's RequestGuard (what the broker and name server run).

For every request a peer sends, before its handler is looked up:

1. the ACL file is looked at again when ``PlainAclReloader.maybe_reload`` says it is time (at most
   once a second; a changed file takes effect for the next request);
2. :meth:`AclValidator.validate` checks the signature, Gantry's signed timestamp and nonce
   (``replay_cache.py``; the guard's clock is the server's) and the permissions;
3. a refusal is logged at INFO (peer, code, remark) and its remark returned, so the server answers
   NO_PERMISSION (16) and runs nothing.

Refusals are logged at most ``burst`` lines per ``window_s`` seconds: a flood of unsigned requests
must not flood the log. The first refusal after a quiet window says how many were left out.
"""

from __future__ import annotations

import logging

from brokers.engine.acl.access_validator import AclValidator
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.plain_acl_config import PlainAclConfig
from brokers.engine.acl.plain_acl_reloader import PlainAclReloader
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.acl")

REFUSAL_LOG_BURST = 20  # refusal lines per window; more are counted, not logged
REFUSAL_LOG_WINDOW_S = 10.0


class RefusalLog:
    """Log refusals at INFO, at most ``burst`` lines per ``window_s`` of the clock."""

    def __init__(
        self,
        name: str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        burst: int = REFUSAL_LOG_BURST,
        window_s: float = REFUSAL_LOG_WINDOW_S,
    ) -> None:
        self.name = name
        self._clock = clock
        self._burst = burst
        self._window_s = window_s
        self._window_start = float("-inf")
        self._logged = 0
        self.suppressed = 0  # refusals not logged in the current window
        self.total = 0

    def refused(self, remote_addr: str, code: int, remark: str) -> None:
        self.total += 1
        now = self._clock.monotonic()
        if now - self._window_start >= self._window_s:
            if self.suppressed:
                log.info(
                    "%s: %d more refused requests were not logged in the last %.0fs",
                    self.name,
                    self.suppressed,
                    self._window_s,
                )
            self._window_start, self._logged, self.suppressed = now, 0, 0
        if self._logged < self._burst:
            self._logged += 1
            log.info("%s: refused request code %s from %s: %s", self.name, code, remote_addr, remark)
        else:
            self.suppressed += 1


class AclGuard:
    """Validate each request against the ACL file (re-read when it changes) or a fixed config."""

    def __init__(
        self, source: PlainAclReloader | PlainAclConfig, *, name: str = "acl", clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.reloader = source if isinstance(source, PlainAclReloader) else None
        self.validator = AclValidator(source, clock=clock)
        self.refusals = RefusalLog(name, clock=clock)

    @classmethod
    def from_file(cls, path: str, *, name: str = "acl", clock: Clock = SYSTEM_CLOCK) -> AclGuard:
        """Load ``path`` (AclConfigError when it cannot be used: a server must not start then)."""
        return cls(PlainAclReloader(path, clock=clock), name=name, clock=clock)

    @property
    def config(self) -> PlainAclConfig:
        return self.validator.config

    def refusal(self, request: RemotingCommand, remote_addr: str) -> str | None:
        """None when the request may run; else the NO_PERMISSION remark (the refusal is logged)."""
        if self.reloader is not None:
            self.reloader.maybe_reload()
        try:
            self.validator.validate(request, remote_addr)
        except AclRefused as exc:
            remark = exc.remark
        except Exception as exc:  # a bug in a check must close the door, not open it
            log.warning("%s: ACL check of request code %s failed: %r", self.refusals.name, request.code, exc)
            remark = f"the permissions of request code {request.code} could not be checked"
        else:
            return None
        self.refusals.refused(remote_addr, request.code, remark)
        return remark
