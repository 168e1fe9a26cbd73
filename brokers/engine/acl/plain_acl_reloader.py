"""PlainAclReloader: the ACL file's current config, re-read when the file changes (no thread).

The server calls :meth:`PlainAclReloader.maybe_reload` as often as it likes (per request, or from a
timer); at most once per ``min_interval`` (1 s) of the injected clock it reads the file and compares
its SHA-256 with the loaded one, so any change of content is seen, whatever the file system's mtime
granularity, and a ``touch`` that changes nothing reloads nothing. The file is small (accounts and
patterns), so a read a second costs little; ``os.stat`` first skips the read once mtime, size and inode
have stayed the same for ``racy_window`` (2 s): a second write within the file system's timestamp
granularity (up to 2 s on some) may keep all three, and until the window has passed we read anyway.

A changed file that fails validation keeps the previous config in force (an edit in progress must not
lock everyone out, nor open the tier); the error is kept in ``last_error`` and logged once per content.
The first load, at construction, raises :class:`~brokers.engine.acl.plain_acl_config.AclConfigError`:
a server must not start with an unreadable ACL.
"""

from __future__ import annotations

import hashlib
import logging
import os

from brokers.engine.acl.plain_acl_config import AclConfigError, PlainAclConfig, parse_plain_acl_text
from brokers.engine.acl.plain_acl_yaml import MAX_ACL_FILE_BYTES
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger("brokers.engine.acl")

RELOAD_MIN_INTERVAL = 1.0  # seconds between two looks at the file
RACY_WINDOW = 2.0  # seconds a stat must stay unchanged before it alone is trusted (coarse mtimes)


class PlainAclReloader:
    def __init__(
        self,
        path: str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        min_interval: float = RELOAD_MIN_INTERVAL,
        racy_window: float = RACY_WINDOW,
    ) -> None:
        self.path = path
        self._clock = clock
        self._min_interval = min_interval
        self._racy_window = racy_window
        self.last_error: str | None = None
        self.reload_count = 0
        stat, data = self._read()
        self._config = self._parse(data)
        self._digest = hashlib.sha256(data).digest()
        self._failed_digest: bytes | None = None
        self._stat = stat
        self._stat_since = self._last_look = clock.monotonic()

    @property
    def config(self) -> PlainAclConfig:
        """The config in force: the last valid content of the file."""
        return self._config

    def maybe_reload(self) -> bool:
        """Look at the file if ``min_interval`` has passed; return True when a new config took effect."""
        now = self._clock.monotonic()
        if now - self._last_look < self._min_interval:
            return False
        self._last_look = now
        try:
            stat = _stat_key(os.stat(self.path))
            if stat == self._stat and now - self._stat_since >= self._racy_window:
                return False
            stat, data = self._read()
        except (OSError, AclConfigError) as exc:
            self._fail(f"{self.path}: {exc}" if isinstance(exc, OSError) else str(exc), None)
            return False
        if stat != self._stat:
            self._stat, self._stat_since = stat, now
        digest = hashlib.sha256(data).digest()
        if digest == self._digest or digest == self._failed_digest:
            return False
        try:
            config = self._parse(data)
        except AclConfigError as exc:
            self._fail(str(exc), digest)
            return False
        self._config, self._digest = config, digest
        self._failed_digest, self.last_error = None, None
        self.reload_count += 1
        log.info("ACL file %s reloaded: %d accounts", self.path, len(config.accounts))
        return True

    def reload_now(self) -> bool:
        """Read the file now, whatever ``min_interval`` says (after this server rewrote it); True when a new config took effect."""
        self._last_look = float("-inf")
        self._stat = (-1, -1, -1)  # no stat matches: the file is read
        return self.maybe_reload()

    def _read(self) -> tuple[tuple[int, int, int], bytes]:
        try:
            with open(self.path, "rb") as handle:
                stat = _stat_key(os.fstat(handle.fileno()))
                return stat, handle.read(MAX_ACL_FILE_BYTES + 1)  # more is refused by the parser, never read whole
        except OSError as exc:
            raise AclConfigError(f"{self.path}: cannot read the ACL file: {exc}") from None

    def _parse(self, data: bytes) -> PlainAclConfig:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AclConfigError(f"{self.path}: not UTF-8: {exc}") from None
        return parse_plain_acl_text(text, source=self.path)

    def _fail(self, error: str, digest: bytes | None) -> None:
        if error != self.last_error:
            log.error("ACL file not reloaded, the previous config stays in force: %s", error)
        self.last_error, self._failed_digest = error, digest


def _stat_key(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_mtime_ns, stat.st_size, stat.st_ino
