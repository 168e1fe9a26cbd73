"""AclValidator: the server-side check of one request against the plain ACL (PlainPermissionManager.validate).

In order, as RocketMQ 4.x does it, with one step of Gantry's own (5):

1. a peer matching ``globalWhiteRemoteAddresses`` passes, unsigned;
2. no ``AccessKey``: refused (the request is unsigned); an accessKey the file does not list: refused;
3. a peer matching the account's ``whiteRemoteAddress`` passes without a signature;
4. the ``Signature`` must be the request's (constant-time compare), else refused;
5. a signed ``GantryTimestamp`` and ``GantryNonce`` must be fresh and unseen, and an account (or
   file) that requires them refuses a request without them (:mod:`.replay_cache`); white addresses
   (1, 3) pass before this step, as they pass without a signature;
6. an admin-only code needs ``admin: true``;
7. an admin account with no topic or group entries passes every resource check;
8. every (resource, perm) of :func:`~brokers.engine.acl.request_rules.required_resources`: the account's
   entry for the topic or group wins, else its default; DENY refuses, else the needed bit must be held.

A refusal raises :class:`~brokers.engine.acl.acl_refused.AclRefused`; its remark names what was refused
and never a secret. Resources are read only after the signature and the admin check pass, so an
unsigned request costs no body parsing.
"""

from __future__ import annotations

from hmac import compare_digest
from typing import Any, Protocol

from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.permission import Perm, check_permission, describe_resource, is_group_resource, perm_name
from brokers.engine.acl.plain_acl_config import PlainAccessAccount, PlainAclConfig
from brokers.engine.acl.remote_address import split_host
from brokers.engine.acl.replay_cache import ReplayCache
from brokers.engine.acl.request_rules import REQUEST_RULES, UNKNOWN_CODE_RULE, Access, required_resources
from brokers.engine.acl.signature import ACCESS_KEY, GANTRY_NONCE, GANTRY_TIMESTAMP, SIGNATURE, signing_key
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand


class HasAclConfig(Protocol):
    """Anything holding the current config, such as :class:`~brokers.engine.acl.plain_acl_reloader.PlainAclReloader`."""

    @property
    def config(self) -> PlainAclConfig: ...


class _Fixed:
    def __init__(self, config: PlainAclConfig) -> None:
        self.config = config


_rule_for = REQUEST_RULES.get
_CACHE_LIMIT = 4096  # entries per cache; past it the cache starts over (peers and resources churn slowly)


class AclValidator:
    """Validate requests against a fixed config or a reloader's current one.

    Caches spare the per-request work that depends only on the config: the peer's host and whether it
    is globally white (per peer address); whether an account holds a perm on a resource (per accessKey,
    resource and perm); and, for codes whose needs follow from ext fields alone (``decided_by``: sends,
    pulls, offsets), the requests already granted (per accessKey, code and those fields' values). All
    start over whenever the config in force is a different object (a reload), so a changed file takes
    effect for the next request as before. Refusals are never remembered. The signature and the admin
    check run for every request; nothing about the signature is cached but the secret's key schedule.
    The replay cache outlives reloads: a reload must not let a request seen before pass again.
    """

    def __init__(self, source: PlainAclConfig | HasAclConfig, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._source: HasAclConfig = _Fixed(source) if isinstance(source, PlainAclConfig) else source
        self.replays = ReplayCache(clock)
        self._cached_for: PlainAclConfig | None = None
        self._peers: dict[object, tuple[str | None, bool]] = {}
        self._granted: dict[tuple[str, str, Perm], bool] = {}
        self._decided: set[tuple[str | int | None, ...]] = set()

    @property
    def config(self) -> PlainAclConfig:
        return self._source.config

    def validate(self, request: RemotingCommand, remote_addr: str | tuple[Any, ...] | None) -> None:
        """Return when ``request`` from ``remote_addr`` may run; raise AclRefused(remark) when not.

        ``remote_addr`` is the peer: asyncio's ``(host, port)``, ``host:port``, ``[v6]:port`` or a host.
        """
        config = self._current()
        peer = self._peers.get(remote_addr)
        if peer is None:
            peer = self._peer(config, remote_addr)
        host, globally_white = peer
        if globally_white:
            return
        ext_fields = request.ext_fields
        access_key = ext_fields.get(ACCESS_KEY)
        if not access_key:
            raise AclRefused(f"request code {request.code} is not signed (no AccessKey) and the ACL is on")
        account = config.accounts.get(access_key)
        if account is None:
            raise AclRefused(f"unknown accessKey {access_key}")
        white = account.white_remote_address
        if white.text and white.matches(host):  # an empty pattern matches nothing
            return
        signature = ext_fields.get(SIGNATURE)  # signature.verify, written out: this runs for every request
        if not signature or not compare_digest(
            signing_key(account.secret_key).signature(ext_fields, request.body).encode("ascii"),
            signature.encode("utf-8", "replace"),
        ):
            raise AclRefused(f"signature mismatch for accessKey {access_key}")
        replay = config.replay_protection
        if (
            replay.required
            or account.require_replay_protection
            or GANTRY_NONCE in ext_fields
            or GANTRY_TIMESTAMP in ext_fields
        ):
            self.replays.check(
                ext_fields,
                access_key=access_key,
                settings=replay,
                required=replay.required or account.require_replay_protection,
            )
        self.check_access(account, request)

    def check_access(self, account: PlainAccessAccount, request: RemotingCommand) -> None:
        """Steps 6-8 for an account already authenticated (by a signature here, or by the 5.x gRPC
        endpoint's own): raise AclRefused unless ``account`` may run ``request``."""
        self._current()
        access_key = account.access_key
        ext_fields = request.ext_fields
        rule = _rule_for(request.code, UNKNOWN_CODE_RULE)  # request_rules.rule_for, without its frame
        if rule.access is Access.ADMIN and not account.admin:
            raise AclRefused(
                f"request code {_code_name(request.code)} needs an admin account; accessKey {access_key} is not admin"
            )
        if account.admin and not account.has_resource_perms:
            return
        decided_by = rule.decided_by
        if decided_by is not None:  # the needs follow from these ext fields: a granted request is remembered
            decision = (access_key, request.code, *map(ext_fields.get, decided_by))
            if decision in self._decided:
                return
        granted = self._granted
        for resource, perm in required_resources(request, rule):
            key = (access_key, resource, perm)
            allowed = granted.get(key)
            if allowed is None:
                allowed = check_permission(perm, account.owned_perm(resource, is_group=is_group_resource(resource)))
                if len(granted) >= _CACHE_LIMIT:
                    granted.clear()
                granted[key] = allowed
            if not allowed:
                raise AclRefused(
                    f"no permission to {perm_name(perm)} on {describe_resource(resource)} for accessKey {access_key}"
                )
        if decided_by is not None:
            if len(self._decided) >= _CACHE_LIMIT:
                self._decided.clear()
            self._decided.add(decision)

    def _current(self) -> PlainAclConfig:
        """The config in force; the caches start over when it is a different object (a reload)."""
        config = self._source.config
        if config is not self._cached_for:
            self._cached_for, self._peers, self._granted, self._decided = config, {}, {}, set()
        return config

    def _peer(self, config: PlainAclConfig, remote_addr: str | tuple[Any, ...] | None) -> tuple[str | None, bool]:
        """The peer's host and whether it is globally white, remembered for the next request."""
        host = split_host(remote_addr)
        peer = (host, config.is_globally_white(host))
        if len(self._peers) >= _CACHE_LIMIT:
            self._peers.clear()
        self._peers[remote_addr] = peer
        return peer


def _code_name(code: int) -> str:
    try:
        return f"{code} ({RequestCode(code).name})"
    except ValueError:
        return str(code)
