"""The ACL admin requests as plans: RocketMQ's 50, 51, 52, 53 and Gantry's 10006, one broker each.

Like RocketMQ's ``mqadmin updateAclConfig -c CLUSTER``, a change of a cluster's ACL goes to every
broker of it (masters and slaves: each checks requests against its own file); the caller fans the
plan out (the console's gateway: ``brokers/gateway/acl.py``). The header fields are RocketMQ 4.9's
(``CreateAccessConfigRequestHeader``: ``topicPerms`` / ``groupPerms`` comma-separated), so these
plans change an Apache broker's ACL too, except 10006 (Gantry's: the accounts without secrets),
which an Apache broker answers REQUEST_CODE_NOT_SUPPORTED (:class:`AclListingNotSupported`).

A refused change raises MQBrokerError with the broker's code (209, 210, 211; NO_PERMISSION 16 for a
broker without an ACL file or a key that is not an admin's) and its remark, which names the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from brokers.engine.acl.plain_acl_editor import AccessConfigChange
from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.plan import Call, Plan, check
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.headers.acl import (
    DeleteAccessConfigRequestHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)

__all__ = [
    "AccessConfigChange",
    "AclAccount",
    "AclListing",
    "AclListingNotSupported",
    "AclVersionInfo",
    "create_and_update_access_config",
    "delete_access_config",
    "get_acl_accounts",
    "get_broker_cluster_acl_info",
    "update_global_white_addrs_config",
]


class AclListingNotSupported(MQBrokerError):
    """The broker does not know GANTRY_GET_ACL_ACCOUNTS (an Apache broker, or an older Gantry)."""

    def _describe(self) -> str:
        where = f"broker {self.addr}" if self.addr else "the broker"
        return (
            f"{where} does not list its ACL accounts (GANTRY_GET_ACL_ACCOUNTS, request code "
            f"{RequestCode.GANTRY_GET_ACL_ACCOUNTS}): an Apache RocketMQ broker or an older Gantry one"
        )


@dataclass(frozen=True, slots=True)
class AclAccount:
    """One account as a broker lists it: never a secret."""

    access_key: str
    white_remote_address: str
    admin: bool
    default_topic_perm: str
    default_group_perm: str
    topic_perms: tuple[str, ...]  # "topicA=PUB"
    group_perms: tuple[str, ...]  # "groupA=SUB"


@dataclass(frozen=True, slots=True)
class AclVersionInfo:
    """GET_BROKER_CLUSTER_ACL_INFO's answer (RocketMQ's ClusterAclVersionInfo)."""

    broker_name: str
    broker_addr: str
    cluster_name: str
    counter: int
    timestamp: int
    all_acl_file_version: dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class AclListing:
    """GANTRY_GET_ACL_ACCOUNTS's answer: the ACL in force on one broker."""

    broker_name: str
    broker_addr: str
    cluster_name: str
    acl_file: str
    counter: int
    timestamp: int
    reload_error: str
    global_white_remote_addresses: tuple[str, ...]
    accounts: tuple[AclAccount, ...]


def _strs(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def parse_acl_accounts(body: bytes) -> AclListing:
    obj = load_object(body)
    data_version = obj.get("dataVersion")
    version = data_version if isinstance(data_version, dict) else {}
    accounts = tuple(
        AclAccount(
            access_key=str(a.get("accessKey", "")),
            white_remote_address=str(a.get("whiteRemoteAddress") or ""),
            admin=a.get("admin") is True,
            default_topic_perm=str(a.get("defaultTopicPerm") or "DENY"),
            default_group_perm=str(a.get("defaultGroupPerm") or "DENY"),
            topic_perms=_strs(a.get("topicPerms")),
            group_perms=_strs(a.get("groupPerms")),
        )
        for a in (obj.get("accounts") or [])
        if isinstance(a, dict)
    )
    return AclListing(
        broker_name=str(obj.get("brokerName", "")),
        broker_addr=str(obj.get("brokerAddr", "")),
        cluster_name=str(obj.get("clusterName", "")),
        acl_file=str(obj.get("aclFile", "")),
        counter=int(version.get("counter") or 0),
        timestamp=int(version.get("timestamp") or 0),
        reload_error=str(obj.get("reloadError") or ""),
        global_white_remote_addresses=_strs(obj.get("globalWhiteRemoteAddresses")),
        accounts=accounts,
    )


def create_and_update_access_config(addr: str, change: AccessConfigChange) -> Plan[None]:
    """UPDATE_AND_CREATE_ACL_CONFIG (50) to the broker at ``addr``."""
    code = RequestCode.UPDATE_AND_CREATE_ACL_CONFIG
    check((yield Call(code, change.to_header().encode(), addr=addr)), request_code=code)


def delete_access_config(addr: str, access_key: str) -> Plan[None]:
    """DELETE_ACL_CONFIG (51) to the broker at ``addr``."""
    code = RequestCode.DELETE_ACL_CONFIG
    ext = DeleteAccessConfigRequestHeader(access_key=access_key).encode()
    check((yield Call(code, ext, addr=addr)), request_code=code)


def update_global_white_addrs_config(
    addr: str, global_white_addrs: str, acl_file_full_path: str | None = None
) -> Plan[None]:
    """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53): ``global_white_addrs`` comma-separated ("" clears them)."""
    code = RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG
    ext = UpdateGlobalWhiteAddrsConfigRequestHeader(
        global_white_addrs=global_white_addrs, acl_file_full_path=acl_file_full_path or None
    ).encode()
    check((yield Call(code, ext, addr=addr)), request_code=code)


def get_broker_cluster_acl_info(addr: str) -> Plan[AclVersionInfo]:
    """GET_BROKER_CLUSTER_ACL_INFO (52): the broker's ACL version (RocketMQ 4.9 sends no accounts)."""
    code = RequestCode.GET_BROKER_CLUSTER_ACL_INFO
    reply = check((yield Call(code, addr=addr)), request_code=code)
    ext = reply.ext
    try:
        version = json.loads(ext.get("version") or "{}")
        files = json.loads(ext.get("allAclFileVersion") or "{}")
    except ValueError:
        version, files = {}, {}
    return AclVersionInfo(
        broker_name=ext.get("brokerName", ""),
        broker_addr=ext.get("brokerAddr", ""),
        cluster_name=ext.get("clusterName", ""),
        counter=int(version.get("counter") or 0),
        timestamp=int(version.get("timestamp") or 0),
        all_acl_file_version=files if isinstance(files, dict) else {},
    )


def get_acl_accounts(addr: str) -> Plan[AclListing]:
    """GANTRY_GET_ACL_ACCOUNTS (10006): the broker's ACL in force, without secrets."""
    code = RequestCode.GANTRY_GET_ACL_ACCOUNTS
    reply = yield Call(code, addr=addr)
    if reply.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
        raise AclListingNotSupported(reply.code, reply.remark, request_code=code, addr=reply.addr or addr)
    return parse_acl_accounts(check(reply, request_code=code).body)
