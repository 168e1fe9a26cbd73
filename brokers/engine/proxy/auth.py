"""Who is calling the gRPC endpoint: the 5.x request metadata, its signature, and the ACL check.

Every 5.x client sends, with each call, ``x-mq-client-id``, ``x-mq-language``,
``x-mq-client-version``, ``x-mq-date-time`` (``yyyyMMddTHHmmssZ``) and, when it has credentials,
``authorization: MQv2-HMAC-SHA1 Credential=<accessKey>[/...], SignedHeaders=x-mq-date-time,
Signature=<hex HMAC-SHA1 of the date-time under the secret>`` (what RocketMQ 5's
DefaultAuthenticationContextBuilder reads). With the broker's ACL on, the endpoint checks that
signature against the same plain_acl.yml accounts as the remoting port (global and account white
addresses pass unsigned, as there), then each translated remoting request goes through the
account's permission check (:meth:`AclValidator.check_access`): the rules of
``acl/request_rules.py`` apply to 5.x clients unchanged.

Replay: the 5.x signature covers only a date-time, to the second, and RocketMQ's clients send it in
their local time zone labelled ``Z``; a freshness window would refuse clients east or west of UTC,
so none is enforced. A captured 5.x call can be replayed like a 4.x one: use TLS (docs/security.md).
"""

from __future__ import annotations

import hmac
from binascii import Error as HexError
from binascii import unhexlify
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import sha1

from brokers.engine.acl.acl_guard import AclGuard
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.plain_acl_config import PlainAccessAccount
from brokers.engine.acl.remote_address import split_host
from brokers.engine.remoting.command import RemotingCommand

MAX_CLIENT_ID = 255  # bytes of x-mq-client-id kept; longer ids are refused


class Unauthenticated(Exception):
    """The call's credentials are missing or wrong (gRPC UNAUTHENTICATED / 5.x Code.UNAUTHORIZED)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """One call's client: its id, language, version string, address and, with the ACL on, account."""

    client_id: str
    language: str
    version: str
    remote_addr: str
    account: PlainAccessAccount | None = None  # None: the ACL is off, or a white address
    checked: bool = False  # True: the ACL is on and requests must pass check_access (account set)


def metadata_dict(metadata: Iterable[tuple[str, str | bytes]] | None) -> dict[str, str]:
    """gRPC invocation metadata as a dict of lower-case keys (the last value wins)."""
    out: dict[str, str] = {}
    for key, value in metadata or ():
        if isinstance(value, bytes):
            continue
        out[key.lower()] = value
    return out


def peer_addr(peer: str) -> str:
    """grpc's peer string (``ipv4:127.0.0.1:5555``, ``ipv6:[::1]:5555``) as ``host:port``."""
    for prefix in ("ipv4:", "ipv6:"):
        if peer.startswith(prefix):
            return peer[len(prefix) :]
    return peer


def identify(metadata: dict[str, str], peer: str, guard: AclGuard | None) -> Caller:
    """The caller of one gRPC call; Unauthenticated when the ACL is on and the call is not signed right."""
    client_id = metadata.get("x-mq-client-id", "")
    if len(client_id.encode()) > MAX_CLIENT_ID:
        raise Unauthenticated(f"x-mq-client-id is longer than {MAX_CLIENT_ID} bytes")
    language = (metadata.get("x-mq-language") or "OTHER").upper()[:16]
    version = metadata.get("x-mq-client-version", "")[:32]
    remote = peer_addr(peer)
    if guard is None:
        return Caller(client_id, language, version, remote)
    if guard.reloader is not None:
        guard.reloader.maybe_reload()
    config = guard.validator.config
    host = split_host(remote)
    if config.is_globally_white(host):
        return Caller(client_id, language, version, remote)
    authorization = metadata.get("authorization", "")
    access_key, signature = _parse_authorization(authorization)
    account = config.accounts.get(access_key)
    if account is None:
        raise Unauthenticated(f"unknown accessKey {access_key}")
    white = account.white_remote_address
    if white.text and white.matches(host):
        return Caller(client_id, language, version, remote)
    date_time = metadata.get("x-mq-date-time", "")
    if not date_time:
        raise Unauthenticated("the call is signed but has no x-mq-date-time")
    expected = hmac.new(account.secret_key.encode(), date_time.encode(), sha1).digest()
    if not hmac.compare_digest(expected, signature):
        raise Unauthenticated(f"signature mismatch for accessKey {access_key}")
    return Caller(client_id, language, version, remote, account, checked=True)


def _parse_authorization(value: str) -> tuple[str, bytes]:
    if not value:
        raise Unauthenticated("the call is not signed (no authorization metadata) and the ACL is on")
    scheme, _, rest = value.partition(" ")
    if scheme != "MQv2-HMAC-SHA1":
        raise Unauthenticated(f"unsupported authorization scheme {scheme[:32]!r}: expected MQv2-HMAC-SHA1")
    fields = {}
    for item in rest.split(","):
        key, sep, val = item.strip().partition("=")
        if sep:
            fields[key] = val
    access_key = fields.get("Credential", "").split("/")[0]
    if not access_key:
        raise Unauthenticated("the authorization has no Credential")
    try:
        signature = unhexlify(fields.get("Signature", ""))
    except (HexError, ValueError):
        raise Unauthenticated("the authorization's Signature is not hexadecimal") from None
    if not signature:
        raise Unauthenticated("the authorization has no Signature")
    return access_key, signature


def authorize(guard: AclGuard | None, caller: Caller, request: RemotingCommand) -> str | None:
    """None when ``caller`` may run ``request``, else the refusal's remark."""
    if guard is None or not caller.checked or caller.account is None:
        return None
    try:
        guard.validator.check_access(caller.account, request)
    except AclRefused as exc:
        guard.refusals.refused(caller.remote_addr, request.code, exc.remark)
        return exc.remark
    return None
