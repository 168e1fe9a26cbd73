"""The ACL admin changes as pure functions: PlainAclConfig in, a new PlainAclConfig out, or AclEditError.

What the broker's handlers of RocketMQ's ACL admin codes apply (``broker/processors/acl_admin.py``),
with RocketMQ 4.9's header fields (``CreateAccessConfigRequestHeader`` and friends):

- :func:`upsert_account` (UPDATE_AND_CREATE_ACL_CONFIG, 50): ``accessKey``, ``secretKey``,
  ``whiteRemoteAddress``, ``admin`` ("true"/"false"), ``defaultTopicPerm``, ``defaultGroupPerm``,
  ``topicPerms`` and ``groupPerms`` as comma-separated ``name=PERM`` lists. As in RocketMQ's
  ``createAclAccessConfigMap``, a field the request leaves out (None; an empty default perm) keeps
  an existing account's value, ``admin`` is always set (a Java boolean: absent is false). A new
  account goes last; an updated one keeps its place (RocketMQ moves it last: the order decides the
  first admin account, which brokers sign with, so Gantry keeps it).
- :func:`delete_account` (DELETE_ACL_CONFIG, 51): ``accessKey``; unknown keys are refused.
- :func:`set_global_white_addresses` (UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, 53): ``globalWhiteAddrs``,
  comma-separated; an empty string clears the list.

Validation is the ACL core's (:func:`~.plain_acl_config.plain_acl_config_from_data`: key lengths,
perm spellings, address patterns, duplicates), naming the request field (``topicPerms[1]: unknown
perm 'PUBX' ...``). Where Gantry differs from RocketMQ 4.9, the difference is on the safe side or
makes the console usable:

- an update may leave ``secretKey`` out to keep the account's secret (RocketMQ demands it each
  time), so the console asks for a secret once, at creation;
- ``topicPerms: ""`` (or ``groupPerms``) empties the list (RocketMQ refuses ""), and empty items
  (a trailing comma) are skipped;
- commas inside ``{...}`` do not split a white address (``10.0.0.{1,2}`` stays one pattern;
  RocketMQ splits it and fails);
- a change that would leave no ``admin: true`` account is refused: the brokers sign their own
  requests with the first admin account and the console with an admin's key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from brokers.engine.acl.plain_acl_config import (
    ACCOUNT_REPLAY_KEY,
    AclConfigError,
    PlainAccessAccount,
    PlainAclConfig,
    plain_acl_config_from_data,
)
from brokers.engine.acl.plain_acl_writer import account_perm_entries
from brokers.engine.acl.permission import perm_name
from brokers.engine.remoting.headers.acl import CreateAccessConfigRequestHeader


class AclEditError(ValueError):
    """A change refused; the message names the request field. Nothing was changed."""


@dataclass(frozen=True, slots=True)
class AccessConfigChange:
    """UPDATE_AND_CREATE_ACL_CONFIG's header: each field as sent, None when the request left it out."""

    access_key: str
    secret_key: str | None = None
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: str | None = None
    default_group_perm: str | None = None
    topic_perms: str | None = None  # "topicA=PUB,topicB=SUB"
    group_perms: str | None = None

    @classmethod
    def from_header(cls, header: CreateAccessConfigRequestHeader) -> AccessConfigChange:
        """The change a request's header asks for (the key without surrounding blanks)."""
        return cls(
            access_key=header.access_key.strip(),
            secret_key=header.secret_key,
            white_remote_address=header.white_remote_address,
            admin=header.admin,
            default_topic_perm=header.default_topic_perm,
            default_group_perm=header.default_group_perm,
            topic_perms=header.topic_perms,
            group_perms=header.group_perms,
        )

    def to_header(self) -> CreateAccessConfigRequestHeader:
        """The header a client sends (fields left out stay out, as Java leaves null fields out)."""
        return CreateAccessConfigRequestHeader(
            access_key=self.access_key,
            secret_key=self.secret_key,
            white_remote_address=self.white_remote_address,
            admin=self.admin,
            default_topic_perm=self.default_topic_perm,
            default_group_perm=self.default_group_perm,
            topic_perms=self.topic_perms,
            group_perms=self.group_perms,
        )


def split_perm_list(text: str | None) -> list[str] | None:
    """``"a=PUB, b=SUB"`` -> ``["a=PUB", "b=SUB"]`` (empty items skipped); None stays None."""
    if text is None:
        return None
    return [item.strip() for item in text.split(",") if item.strip()]


def split_addresses(text: str) -> list[str]:
    """Comma-separated address patterns; commas inside ``{...}`` belong to their pattern."""
    return [item.strip() for item in re.split(r",(?![^{]*\})", text) if item.strip()]


def account_data(account: PlainAccessAccount) -> dict[str, Any]:
    """An account as the file's fields (what :func:`plain_acl_config_from_data` reads)."""
    topics, groups = account_perm_entries(account)
    data = {
        "accessKey": account.access_key,
        "secretKey": account.secret_key,
        "whiteRemoteAddress": account.white_remote_address.text or None,
        "admin": "true" if account.admin else "false",
        "defaultTopicPerm": perm_name(account.default_topic_perm),
        "defaultGroupPerm": perm_name(account.default_group_perm),
        "topicPerms": topics,
        "groupPerms": groups,
    }
    if account.require_replay_protection:  # Gantry's key: RocketMQ's header has no field for it, an update keeps it
        data[ACCOUNT_REPLAY_KEY] = "true"
    return data


def _checked_account(data: dict[str, Any]) -> PlainAccessAccount:
    try:
        config = plain_acl_config_from_data({"accounts": [data]})
    except AclConfigError as exc:
        raise AclEditError(str(exc).removeprefix("accounts[0].")) from None
    return next(iter(config.accounts.values()))


def _require_admin_left(before: PlainAclConfig, after: dict[str, PlainAccessAccount], what: str) -> None:
    had_admin = any(a.admin for a in before.accounts.values())
    if had_admin and not any(a.admin for a in after.values()):
        raise AclEditError(
            f"{what} would leave no admin account: the brokers and the console sign with one; "
            "create another admin account first"
        )


def upsert_account(config: PlainAclConfig, change: AccessConfigChange) -> tuple[PlainAclConfig, bool]:
    """Create or update ``change.access_key``; return the new config and whether the account is new."""
    if not change.access_key:
        raise AclEditError("accessKey: missing")
    existing = config.account(change.access_key)
    data: dict[str, Any] = account_data(existing) if existing is not None else {"accessKey": change.access_key}
    if change.secret_key:
        data["secretKey"] = change.secret_key
    elif existing is None:
        raise AclEditError("secretKey: missing (a new account needs a secret of 7 characters or more)")
    if change.white_remote_address is not None:
        data["whiteRemoteAddress"] = change.white_remote_address.strip() or None
    data["admin"] = "true" if change.admin else "false"
    for field, value in (
        ("defaultTopicPerm", change.default_topic_perm),
        ("defaultGroupPerm", change.default_group_perm),
    ):
        if value is not None and value.strip():
            data[field] = value.strip()
    for field, value in (("topicPerms", change.topic_perms), ("groupPerms", change.group_perms)):
        items = split_perm_list(value)
        if items is not None:
            data[field] = items
    account = _checked_account(data)
    accounts = dict(config.accounts)
    accounts[account.access_key] = account  # an existing key keeps its place in the dict
    _require_admin_left(config, accounts, f"making {account.access_key} a non-admin")
    return replace(config, accounts=MappingProxyType(accounts)), existing is None


def delete_account(config: PlainAclConfig, access_key: str) -> PlainAclConfig:
    """The config without ``access_key``; AclEditError when there is no such account."""
    access_key = (access_key or "").strip()
    if not access_key:
        raise AclEditError("accessKey: missing")
    if access_key not in config.accounts:
        raise AclEditError(f"accessKey: no account {access_key!r} in the ACL file")
    accounts = {key: account for key, account in config.accounts.items() if key != access_key}
    _require_admin_left(config, accounts, f"deleting {access_key}")
    return replace(config, accounts=MappingProxyType(accounts))


def set_global_white_addresses(config: PlainAclConfig, addresses: str | list[str]) -> PlainAclConfig:
    """The config with ``globalWhiteRemoteAddresses`` replaced (a comma-separated string or a list)."""
    items = split_addresses(addresses) if isinstance(addresses, str) else [a.strip() for a in addresses if a.strip()]
    try:
        checked = plain_acl_config_from_data({"globalWhiteRemoteAddresses": items})
    except AclConfigError as exc:
        raise AclEditError(str(exc).replace("globalWhiteRemoteAddresses", "globalWhiteAddrs", 1)) from None
    return replace(config, global_white_remote_addresses=checked.global_white_remote_addresses)
