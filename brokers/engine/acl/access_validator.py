"""AclValidator: the server-side check of one request against the plain ACL (PlainPermissionManager.validate).

In order, as RocketMQ 4.x does it:

1. a peer matching ``globalWhiteRemoteAddresses`` passes, unsigned;
2. no ``AccessKey``: refused (the request is unsigned); an accessKey the file does not list: refused;
3. a peer matching the account's ``whiteRemoteAddress`` passes without a signature;
4. the ``Signature`` must be the request's (constant-time compare), else refused;
5. an admin-only code needs ``admin: true``;
6. an admin account with no topic or group entries passes every resource check;
7. every (resource, perm) of :func:`~brokers.engine.acl.request_rules.required_resources`: the account's
   entry for the topic or group wins, else its default; DENY refuses, else the needed bit must be held.

A refusal raises :class:`~brokers.engine.acl.acl_refused.AclRefused`; its remark names what was refused
and never a secret. Resources are read only after the signature and the admin check pass, so an
unsigned request costs no body parsing.
"""
from __future__ import annotations

from typing import Protocol

from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.permission import check_permission, describe_resource, is_group_resource, perm_name
from brokers.engine.acl.plain_acl_config import PlainAclConfig
from brokers.engine.acl.remote_address import split_host
from brokers.engine.acl.request_rules import Access, required_resources, rule_for
from brokers.engine.acl.signature import ACCESS_KEY, SIGNATURE, verify
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand


class HasAclConfig(Protocol):
    """Anything holding the current config, such as :class:`~brokers.engine.acl.plain_acl_reloader.PlainAclReloader`."""

    @property
    def config(self) -> PlainAclConfig: ...


class _Fixed:
    def __init__(self, config: PlainAclConfig) -> None:
        self.config = config


class AclValidator:
    """Validate requests against a fixed config or a reloader's current one."""

    def __init__(self, source: PlainAclConfig | HasAclConfig) -> None:
        self._source: HasAclConfig = _Fixed(source) if isinstance(source, PlainAclConfig) else source

    @property
    def config(self) -> PlainAclConfig:
        return self._source.config

    def validate(self, request: RemotingCommand, remote_addr: str | tuple | None) -> None:
        """Return when ``request`` from ``remote_addr`` may run; raise AclRefused(remark) when not.

        ``remote_addr`` is the peer: asyncio's ``(host, port)``, ``host:port``, ``[v6]:port`` or a host.
        """
        config = self._source.config
        host = split_host(remote_addr)
        if config.is_globally_white(host):
            return
        access_key = request.ext_fields.get(ACCESS_KEY)
        if not access_key:
            raise AclRefused(f"request code {request.code} is not signed (no AccessKey) and the ACL is on")
        account = config.account(access_key)
        if account is None:
            raise AclRefused(f"unknown accessKey {access_key}")
        if account.white_remote_address.matches(host):
            return
        if not verify(account.secret_key, request.ext_fields, request.body, request.ext_fields.get(SIGNATURE)):
            raise AclRefused(f"signature mismatch for accessKey {access_key}")
        rule = rule_for(request.code)
        if rule.access is Access.ADMIN and not account.admin:
            raise AclRefused(f"request code {_code_name(request.code)} needs an admin account; accessKey {access_key} is not admin")
        if account.admin and not account.has_resource_perms:
            return
        for need in required_resources(request):
            is_group = is_group_resource(need.resource)
            if not check_permission(need.perm, account.owned_perm(need.resource, is_group=is_group)):
                raise AclRefused(
                    f"no permission to {perm_name(need.perm)} on {describe_resource(need.resource)} for accessKey {access_key}"
                )


def _code_name(code: int) -> str:
    try:
        return f"{code} ({RequestCode(code).name})"
    except ValueError:
        return str(code)
