"""ACL admin headers (RocketMQ 4.9's plain ACL, removed from Apache's 5.3 with ACL 1.0): create or
update an account, delete one, replace the global white addresses.

GET_BROKER_CLUSTER_ACL_INFO (52) and Gantry's GANTRY_GET_ACL_ACCOUNTS (10006) carry no header.
In an update an empty value is a value: ``topicPerms=""`` clears the account's topic permissions
where an absent ``topicPerms`` keeps them, and ``globalWhiteAddrs=""`` clears the global list (such
a request travels with a JSON header, which carries empty values; a binary one would drop them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, empty_is_a_value

__all__ = [
    "CreateAccessConfigRequestHeader",
    "DeleteAccessConfigRequestHeader",
    "UpdateGlobalWhiteAddrsConfigRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAccessConfigRequestHeader(RequestHeader):
    """UPDATE_AND_CREATE_ACL_CONFIG (50): the account ``access_key``, created or updated; a field
    left out (None) keeps the account's value. ``topic_perms`` / ``group_perms`` are comma-separated
    ``name=PERM`` entries."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,)

    access_key: str
    secret_key: str | None = field(default=None, metadata=empty_is_a_value())
    white_remote_address: str | None = field(default=None, metadata=empty_is_a_value())
    admin: bool = False
    default_topic_perm: str | None = field(default=None, metadata=empty_is_a_value())
    default_group_perm: str | None = field(default=None, metadata=empty_is_a_value())
    topic_perms: str | None = field(default=None, metadata=empty_is_a_value())
    group_perms: str | None = field(default=None, metadata=empty_is_a_value())


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteAccessConfigRequestHeader(RequestHeader):
    """DELETE_ACL_CONFIG (51)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.DELETE_ACL_CONFIG,)

    access_key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateGlobalWhiteAddrsConfigRequestHeader(RequestHeader):
    """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53): the global white addresses, comma-separated (``""``
    clears them). RocketMQ marks ``aclFileFullPath`` ``@CFNotNull``; Gantry has one ACL file and
    takes it absent as that file."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,)

    global_white_addrs: str = field(metadata=empty_is_a_value())
    acl_file_full_path: str | None = None
