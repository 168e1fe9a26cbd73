"""Changing the brokers' ACL from the console: create, update and delete an account, set the global
white addresses. Admin only, applied to every broker of the cluster, audited without secrets.

Input is checked first by the ACL core's own rules (``brokers/engine/acl/plain_acl_editor.py``),
so a bad perm, key or address pattern is a 400 naming the field before any broker is asked; a
broker's refusal naming a field is turned into the same. Then each broker (masters and slaves) gets
RocketMQ's request (50, 51 or 53). When some brokers applied the change and others did not,
:class:`AclPartiallyApplied` (502) says which; send the change again to converge (it is idempotent).

The audit entry's ``before`` and ``after`` are the account as the brokers list it (no secret;
``secret_changed`` says whether one was set), or the global white addresses.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from brokers.acl.selectors import AclOverview, acl_overview
from brokers.engine.acl.plain_acl_config import PlainAclConfig
from brokers.engine.acl.plain_acl_editor import (
    AccessConfigChange,
    AclEditError,
    set_global_white_addresses,
    upsert_account,
)
from brokers.gateway import acl as gateway
from brokers.gateway.acl import AclAccount
from brokers.gateway.errors import AclChangeRefused, MQBrokerError, RemotingError
from console.actor import Actor
from console.audit import audited
from console.errors import InvalidInput, NotFound, ServiceError, Unavailable
from console.roles import Role

# RocketMQ's header fields -> the console's and the API's field names
FIELDS = {
    "accessKey": "access_key",
    "secretKey": "secret_key",
    "whiteRemoteAddress": "white_remote_address",
    "admin": "admin",
    "defaultTopicPerm": "default_topic_perm",
    "defaultGroupPerm": "default_group_perm",
    "topicPerms": "topic_perms",
    "groupPerms": "group_perms",
    "globalWhiteAddrs": "addresses",
    "globalWhiteRemoteAddresses": "addresses",
}
PLACEHOLDER_SECRET = "x" * 16  # checks an update that keeps the secret; never sent


class AclPartiallyApplied(ServiceError):
    status = 502
    code = "partially_applied"


@dataclass(frozen=True)
class AccountInput:
    """An account as the form and the API give it (lists of ``name=PERM``)."""

    access_key: str
    secret_key: str = ""  # "" on an update: keep the secret
    white_remote_address: str = ""
    admin: bool = False
    default_topic_perm: str = "DENY"
    default_group_perm: str = "DENY"
    topic_perms: tuple[str, ...] = ()
    group_perms: tuple[str, ...] = ()

    def change(self) -> AccessConfigChange:
        for field, items in (("topic_perms", self.topic_perms), ("group_perms", self.group_perms)):
            for i, item in enumerate(items):
                if "," in item:
                    raise InvalidInput(field, f"[{i}] {item!r}: one name=PERM per entry, without commas")
        return AccessConfigChange(
            self.access_key.strip(),
            self.secret_key or None,
            self.white_remote_address.strip(),
            self.admin,
            self.default_topic_perm,
            self.default_group_perm,
            ",".join(self.topic_perms),
            ",".join(self.group_perms),
        )


def _invalid(message: str) -> InvalidInput:
    """A core or broker refusal (``topicPerms[1]: unknown perm ...``) as a 400 on the console's field name."""
    message = message.removesuffix("; nothing changed")
    match = re.match(r"(\w+)(\[\d+\])?:\s*(.*)", message, re.S)
    if match and match.group(1) in FIELDS:
        return InvalidInput(FIELDS[match.group(1)], f"{match.group(2) or ''} {match.group(3)}".strip())
    return InvalidInput("non_field_errors", message)


def _check(change: AccessConfigChange, *, keep_secret: bool) -> None:
    probe = AccessConfigChange(
        **{**asdict(change), "secret_key": change.secret_key or (PLACEHOLDER_SECRET if keep_secret else None)}
    )
    try:
        upsert_account(PlainAclConfig(), probe)
    except AclEditError as exc:
        raise _invalid(str(exc)) from None


def _overview(cluster: str | None) -> AclOverview:
    overview = acl_overview(cluster=cluster)
    if overview.error:
        raise Unavailable(f"the ACL cannot be read: {overview.error}")
    return overview


def _gone(exc: RemotingError | None) -> bool:
    """A delete a broker refused because the account is not there: done (brokers sharing one file see it gone)."""
    return isinstance(exc, AclChangeRefused) and "accessKey: no account" in (exc.remark or "")


def _apply(results: dict[str, RemotingError | None], what: str, *, done=lambda exc: False) -> int:
    """Raise for refusals (400 naming the field when every broker refused the same way); return how many applied.
    ``done(exc)`` says a refusal leaves the broker as the change would."""
    results = {addr: None if done(exc) else exc for addr, exc in results.items()}
    failed = {addr: exc for addr, exc in results.items() if exc is not None}
    if not failed:
        return len(results)
    first = next(iter(failed.values()))
    if len(failed) == len(results):
        if isinstance(first, AclChangeRefused) and first.remark:
            raise _invalid(first.remark)
        if isinstance(first, MQBrokerError):
            raise ServiceError(f"{what} refused: {first}")
        raise Unavailable(f"{what}: no broker answered: {first}")
    applied = ", ".join(addr for addr, exc in results.items() if exc is None)
    detail = "; ".join(f"{addr}: {exc}" for addr, exc in failed.items())
    raise AclPartiallyApplied(f"{what} applied on {applied} but not on {detail}; send it again once they answer")


def _view(account: AclAccount | None) -> dict | None:
    return None if account is None else asdict(account)


def _addrs(overview: AclOverview) -> tuple[str, ...]:
    return tuple(b.addr for b in overview.brokers)


def acl_account_save(
    *, actor: Actor, data: AccountInput, create: bool, cluster: str | None = None
) -> AclAccount | None:
    """Create (``create``) or update an account on every broker; return it as the brokers now list it."""
    actor.require(Role.ADMIN)
    change = data.change()
    _check(change, keep_secret=not create)
    overview = _overview(cluster)
    existing = overview.account(change.access_key)
    if create and existing is not None:
        raise InvalidInput("access_key", f"an account {change.access_key!r} exists already; edit it instead")
    if not create and existing is None:
        raise NotFound(f"no account {change.access_key!r} in the ACL")
    action = "acl.account.create" if create else "acl.account.update"
    with audited(
        actor=actor, action=action, target_type="acl_account", target=change.access_key, before=_view(existing)
    ) as note:
        applied = _apply(
            gateway.acl_account_upsert(_addrs(overview), change),
            f"{'creating' if create else 'updating'} {change.access_key}",
        )
        account = acl_overview(cluster=cluster).account(change.access_key)
        note.after = {**(_view(account) or {}), "secret_changed": bool(change.secret_key)}
        note.reason = f"applied on {applied} brokers"
    return account


def acl_account_delete(*, actor: Actor, access_key: str, cluster: str | None = None) -> None:
    """Delete an account on every broker (the last admin account cannot be deleted: the brokers refuse)."""
    actor.require(Role.ADMIN)
    overview = _overview(cluster)
    existing = overview.account(access_key)
    if existing is None:
        raise NotFound(f"no account {access_key!r} in the ACL")
    with audited(
        actor=actor, action="acl.account.delete", target_type="acl_account", target=access_key, before=_view(existing)
    ) as note:
        applied = _apply(gateway.acl_account_delete(_addrs(overview), access_key), f"deleting {access_key}", done=_gone)
        note.reason = f"applied on {applied} brokers"


def acl_global_white_update(*, actor: Actor, addresses: tuple[str, ...], cluster: str | None = None) -> tuple[str, ...]:
    """Replace the global white addresses on every broker; return them as the brokers now list them."""
    actor.require(Role.ADMIN)
    addresses = tuple(a.strip() for a in addresses if a.strip())
    for i, address in enumerate(addresses):
        if "," in address and not address.endswith("}"):
            raise InvalidInput("addresses", f"[{i}] {address!r}: one pattern per entry")
    try:
        set_global_white_addresses(PlainAclConfig(), list(addresses))
    except AclEditError as exc:
        raise _invalid(str(exc)) from None
    overview = _overview(cluster)
    with audited(
        actor=actor,
        action="acl.global_white.update",
        target_type="acl",
        target="globalWhiteRemoteAddresses",
        before=list(overview.global_white_remote_addresses),
    ) as note:
        applied = _apply(
            gateway.acl_global_white_update(_addrs(overview), addresses), "setting the global white addresses"
        )
        after = acl_overview(cluster=cluster).global_white_remote_addresses
        note.after, note.reason = list(after), f"applied on {applied} brokers"
    return after
