"""RocketMQ's ACL admin requests (50, 51, 52, 53) and Gantry's account listing (10006) on a broker.

The ACL's request rules make every one of these admin-only (``acl/request_rules.py``). A broker
without an ACL file (no ``--acl-file``) has no ACL to show or change: NO_PERMISSION (16).

Changes (RocketMQ 4.9's ``AdminBrokerProcessor`` + ``PlainPermissionManager``, one at a time):
read the ACL file as it is on disk now (brokers may share one file), apply the change
(``acl/plain_acl_editor.py``: the core's validation, the request field named), write the whole file
at once with the next ``dataVersion`` (``acl/plain_acl_writer.py``: tmp + fsync + rename, 0600) and
reload it, so the next request is checked against it. A refused change answers RocketMQ's code
with a remark naming the field and writes nothing:

- UPDATE_AND_CREATE_ACL_CONFIG (50), header ``accessKey``, ``secretKey``, ``whiteRemoteAddress``,
  ``admin``, ``defaultTopicPerm``, ``defaultGroupPerm``, ``topicPerms``, ``groupPerms``
  (comma-separated ``name=PERM``); refused: UPDATE_AND_CREATE_ACL_CONFIG_FAILED (209);
- DELETE_ACL_CONFIG (51), header ``accessKey``; refused: DELETE_ACL_CONFIG_FAILED (210);
- UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53), header ``globalWhiteAddrs`` (comma-separated) and
  ``aclFileFullPath`` (RocketMQ's; Gantry has one file: absent, empty or that file's path);
  refused: UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED (211).

The headers are :mod:`brokers.engine.remoting.headers.acl`'s; a request without ``accessKey`` (or
``globalWhiteAddrs``; an empty one clears the list) is refused SYSTEM_ERROR naming the field.

Reads:

- GET_BROKER_CLUSTER_ACL_INFO (52), no header; the answer's ext fields as RocketMQ 4.9's
  ``GetBrokerAclConfigResponseHeader``: ``version`` (the file's DataVersion as JSON,
  ``{"timestamp": ms, "counter": n}``; a file never changed by these requests: counter 0 and its
  mtime), ``allAclFileVersion`` (JSON ``{path: DataVersion}``), ``brokerName``, ``brokerAddr``,
  ``clusterName``. No body: RocketMQ 4.9's 52 carries versions only, no account.
- GANTRY_GET_ACL_ACCOUNTS (10006), no header: the ACL in force, WITHOUT secrets, as JSON::

      {"brokerName": "broker-a", "brokerAddr": "...", "clusterName": "...", "aclFile": "/path",
       "dataVersion": {"timestamp": ms, "counter": n}, "reloadError": "",
       "globalWhiteRemoteAddresses": ["10.0.0.*"],
       "accounts": [{"accessKey": "app-1", "whiteRemoteAddress": "", "admin": false,
                     "defaultTopicPerm": "DENY", "defaultGroupPerm": "SUB",
                     "topicPerms": ["orders=PUB"], "groupPerms": ["billing=SUB"]}]}

  ``reloadError`` is the reloader's last error: the file on disk is invalid and an older config is
  in force. An Apache broker answers 10006 REQUEST_CODE_NOT_SUPPORTED.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from brokers.engine.acl.acl_guard import AclGuard
from brokers.engine.acl.plain_acl_config import AclConfigError, PlainAclConfig, parse_plain_acl_text
from brokers.engine.acl.plain_acl_editor import (
    AccessConfigChange,
    AclEditError,
    delete_account,
    set_global_white_addresses,
    upsert_account,
)
from brokers.engine.acl.plain_acl_reloader import PlainAclReloader
from brokers.engine.acl.plain_acl_writer import (
    AclDataVersion,
    account_perm_entries,
    read_data_version,
    render_plain_acl,
    write_plain_acl_file,
)
from brokers.engine.acl.permission import perm_name
from brokers.engine.broker.processors.base import Processor, ProcessorRegistry, RequestError, guarded
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.acl import (
    CreateAccessConfigRequestHeader,
    DeleteAccessConfigRequestHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.acl")

NO_ACL_REMARK = "this broker runs without an ACL file (--acl-file): there is no ACL to show or change"


class AclAdminProcessor(Processor):
    def __init__(self, broker: BrokerContext, guard: AclGuard | None) -> None:
        super().__init__(broker)
        self.reloader: PlainAclReloader | None = None if guard is None else guard.reloader
        self._lock = asyncio.Lock()  # one change at a time: each reads the file the previous one wrote

    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, self.update_and_create_access_config)
        server.register_processor(RequestCode.DELETE_ACL_CONFIG, self.delete_access_config)
        server.register_processor(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, self.update_global_white_addrs_config)
        server.register_processor(RequestCode.GET_BROKER_CLUSTER_ACL_INFO, self.get_broker_cluster_acl_info)
        server.register_processor(RequestCode.GANTRY_GET_ACL_ACCOUNTS, self.get_acl_accounts)

    def _reloader(self) -> PlainAclReloader:
        if self.reloader is None:
            raise RequestError(ResponseCode.NO_PERMISSION, NO_ACL_REMARK)
        return self.reloader

    # -- changes -------------------------------------------------------------------------------

    async def _change(
        self, request: RemotingCommand, failed_code: int, what: str, apply: Callable[[PlainAclConfig], PlainAclConfig]
    ) -> RemotingCommand:
        """Read the file, ``apply(config)`` -> new config, write it with the next version, reload."""
        reloader = self._reloader()
        async with self._lock:
            try:
                with open(reloader.path, encoding="utf-8") as handle:
                    text = handle.read()
                config = parse_plain_acl_text(text, source=reloader.path)
            except (OSError, UnicodeDecodeError, AclConfigError) as exc:
                raise RequestError(
                    failed_code, f"the ACL file cannot be changed, it is not valid now: {exc}; nothing changed"
                ) from None
            try:
                new_config = apply(config)
            except AclEditError as exc:
                log.info("ACL change refused (%s, by %s): %s", what, request.ext_fields.get("AccessKey"), exc)
                raise RequestError(failed_code, f"{exc}; nothing changed") from None
            version = (read_data_version(text) or AclDataVersion()).next_version(self.broker.clock.now_ms())
            try:
                await asyncio.to_thread(write_plain_acl_file, reloader.path, render_plain_acl(new_config, version))
            except OSError as exc:
                raise RequestError(failed_code, f"writing the ACL file failed: {exc}") from None
            reloader.reload_now()
        log.info("ACL changed (%s, by %s); dataVersion %d", what, request.ext_fields.get("AccessKey"), version.counter)
        return request.response(ResponseCode.SUCCESS)

    @guarded
    async def update_and_create_access_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        change = AccessConfigChange.from_header(CreateAccessConfigRequestHeader.decode(request))
        return await self._change(
            request,
            ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED,
            f"account {change.access_key}",
            lambda config: upsert_account(config, change)[0],
        )

    @guarded
    async def delete_access_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        access_key = DeleteAccessConfigRequestHeader.decode(request).access_key
        return await self._change(
            request,
            ResponseCode.DELETE_ACL_CONFIG_FAILED,
            f"delete account {access_key}",
            lambda config: delete_account(config, access_key),
        )

    @guarded
    async def update_global_white_addrs_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        reloader = self._reloader()
        failed = ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
        header = UpdateGlobalWhiteAddrsConfigRequestHeader.decode(request)
        addrs, path = header.global_white_addrs, (header.acl_file_full_path or "").strip()
        if path and os.path.realpath(path) != os.path.realpath(reloader.path):
            raise RequestError(
                failed, f"aclFileFullPath: this broker's ACL file is {reloader.path}, not {path}; nothing changed"
            )
        return await self._change(
            request, failed, "global white addresses", lambda config: set_global_white_addresses(config, addrs)
        )

    # -- reads ---------------------------------------------------------------------------------

    def _version(self, reloader: PlainAclReloader) -> AclDataVersion:
        try:
            with open(reloader.path, encoding="utf-8") as handle:
                version = read_data_version(handle.read())
            return version or AclDataVersion(0, os.stat(reloader.path).st_mtime_ns // 1_000_000)
        except (OSError, UnicodeDecodeError):
            return AclDataVersion()

    @guarded
    async def get_broker_cluster_acl_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        reloader = self._reloader()
        version = self._version(reloader).to_json()
        cfg = self.broker.config
        ext = {
            "version": json.dumps(version, separators=(",", ":")),
            "allAclFileVersion": json.dumps({reloader.path: version}, separators=(",", ":")),
            "brokerName": cfg.broker_name,
            "brokerAddr": self.broker.addr,
            "clusterName": cfg.cluster_name,
        }
        return request.response(ResponseCode.SUCCESS, None, ext)

    @guarded
    async def get_acl_accounts(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        reloader = self._reloader()
        reloader.maybe_reload()
        cfg = self.broker.config
        body = {
            "brokerName": cfg.broker_name,
            "brokerAddr": self.broker.addr,
            "clusterName": cfg.cluster_name,
            "aclFile": reloader.path,
            "dataVersion": self._version(reloader).to_json(),
            "reloadError": reloader.last_error or "",
            **accounts_without_secrets(reloader.config),
        }
        return request.response(
            ResponseCode.SUCCESS, None, None, json.dumps(body, separators=(",", ":")).encode("utf-8")
        )


def accounts_without_secrets(config: PlainAclConfig) -> dict[str, Any]:
    """The config as JSON with every secret left out (``globalWhiteRemoteAddresses`` and ``accounts``)."""
    accounts = []
    for account in config.accounts.values():
        topics, groups = account_perm_entries(account)
        accounts.append(
            {
                "accessKey": account.access_key,
                "whiteRemoteAddress": account.white_remote_address.text,
                "admin": account.admin,
                "defaultTopicPerm": perm_name(account.default_topic_perm),
                "defaultGroupPerm": perm_name(account.default_group_perm),
                "topicPerms": topics,
                "groupPerms": groups,
            }
        )
    return {"globalWhiteRemoteAddresses": [p.text for p in config.global_white_remote_addresses], "accounts": accounts}
