"""server_acl_guard: whether a broker or name server runs with the ACL, decided once at start.

Secure by default:

- an ACL file (``--acl-file PATH``): the ACL is on. The file is loaded now (a server with an
  unreadable or invalid file does not start) and re-read when it changes;
- no file, listening on loopback only (127.0.0.0/8, ``::1``, ``localhost``): the ACL is off, as it
  always was (tests, a laptop);
- no file, any other address (``0.0.0.0``, ``::``, an empty host, a routable IP, a host name):
  :class:`AclRequiredError`, the server refuses to start before it binds anything, unless
  ``no_acl`` (``--no-acl``) is set, which logs a warning;
- a file and ``no_acl`` together: AclRequiredError (which one was meant?).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging

from brokers.engine.acl.acl_guard import AclGuard
from brokers.engine.acl.plain_acl_config import AclConfigError
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger("brokers.engine.acl")


class AclRequiredError(AclConfigError):
    """A server on a non-loopback address without an ACL file (and without ``--no-acl``)."""


def is_loopback_host(host: str | None) -> bool:
    """Whether listening on ``host`` is reachable from this machine only."""
    if not host:
        return False  # "" listens on every interface
    text = host.strip().strip("[]")
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def server_acl_guard(
    *, host: str | None, acl_file: str | None, no_acl: bool = False, name: str = "server", clock: Clock = SYSTEM_CLOCK
) -> AclGuard | None:
    """The guard a server listening on ``host`` runs with (None: the ACL is off); see the module docstring."""
    if acl_file and no_acl:
        raise AclRequiredError(f"{name}: give either an ACL file or --no-acl, not both")
    if acl_file:
        guard = AclGuard.from_file(acl_file, name=name, clock=clock)
        log.info("%s: ACL on, %d accounts from %s", name, len(guard.config.accounts), acl_file)
        return guard
    if is_loopback_host(host):
        return None
    if not no_acl:
        raise AclRequiredError(
            f"{name} would listen on {host or 'every interface'} without an ACL: give --acl-file PATH "
            "(RocketMQ's plain_acl.yml), or --no-acl to accept requests from anyone on the network"
        )
    log.warning(
        "%s: listening on %s with the ACL OFF (--no-acl): any peer may create, delete and read everything",
        name,
        host or "every interface",
    )
    return None


def add_acl_arguments(parser: argparse.ArgumentParser) -> None:
    """``--acl-file PATH`` and ``--no-acl``, the same for the broker and the name server."""
    parser.add_argument(
        "--acl-file",
        default=None,
        metavar="PATH",
        help="RocketMQ plain_acl.yml: turn the ACL on (re-read when it changes); required on a non-loopback address",
    )
    parser.add_argument(
        "--no-acl", action="store_true", help="listen on a non-loopback address without an ACL (logged as a warning)"
    )
