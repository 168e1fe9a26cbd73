"""render_plain_acl / write_plain_acl_file: a PlainAclConfig written back as RocketMQ's ``plain_acl.yml``.

The ACL admin requests (``broker/processors/acl_admin.py``) change the file the way RocketMQ's
``PlainPermissionManager`` does: read it, change one part, write it all back with a new
``dataVersion``. The layout is RocketMQ's (``distribution/conf/plain_acl.yml``)::

    globalWhiteRemoteAddresses:
      - "10.10.103.*"
    accounts:
      - accessKey: "RocketMQ"
        secretKey: "12345678"
        whiteRemoteAddress: "192.168.0.*"
        admin: false
        defaultTopicPerm: DENY
        defaultGroupPerm: SUB
        topicPerms:
          - "topicA=DENY"
        groupPerms: []
    dataVersion:
      - counter: 3
        timestamp: 1700000000000

Every text value is double-quoted (``\\`` and ``"`` escaped, control characters and YAML's
other line breaks as ``\\uXXXX``), so a
``*`` pattern, a secret of digits or one holding ``: `` or ``#`` reads back as the same string, both
in :mod:`.plain_acl_yaml` (PyYAML) and in any YAML 1.1 loader (RocketMQ's snakeyaml); perms, ``admin`` and the
version numbers are plain. :func:`render_plain_acl` output parsed by
:func:`~.plain_acl_config.parse_plain_acl_text` gives the same config (a test holds it to that).
Comments of the file are not kept (RocketMQ does not keep them either). Gantry's own keys
(``gantryReplayProtection``, an account's ``gantryRequireReplayProtection``) are written only when
they differ from their defaults, so a file that does not use them stays readable by Apache's 5.x brokers.

:func:`write_plain_acl_file` replaces the file at once: a temporary file in the same directory,
created 0600, written and fsynced, renamed over the file, the directory fsynced. A reader (this
broker's reloader, another broker or name server sharing the file) sees the old file or the new.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from brokers.engine.acl.permission import perm_name
from brokers.engine.acl.plain_acl_config import (
    ACCOUNT_REPLAY_KEY,
    REPLAY_PROTECTION_KEY,
    PlainAccessAccount,
    PlainAclConfig,
)
from brokers.engine.acl.plain_acl_yaml import AclYamlError, load_plain_acl_yaml
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX

FILE_MODE = 0o600  # it holds the secrets


@dataclass(frozen=True, slots=True)
class AclDataVersion:
    """RocketMQ's ``DataVersion`` of an ACL file: bumped (counter + 1, timestamp now) by every admin change."""

    counter: int = 0
    timestamp: int = 0  # ms since the epoch

    def next_version(self, now_ms: int) -> AclDataVersion:
        return AclDataVersion(self.counter + 1, now_ms)

    def to_json(self) -> dict[str, int]:
        """The fields RocketMQ's DataVersion serializes (``timestamp``, ``counter``)."""
        return {"timestamp": self.timestamp, "counter": self.counter}


def read_data_version(text: str) -> AclDataVersion | None:
    """The ``dataVersion`` the file's text holds (its first entry, as RocketMQ reads it); None when absent or unreadable."""
    try:
        data = load_plain_acl_yaml(text)
    except (AclYamlError, RecursionError):
        return None
    entries = data.get("dataVersion") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        return None
    try:
        return AclDataVersion(int(entries[0].get("counter") or 0), int(entries[0].get("timestamp") or 0))
    except (TypeError, ValueError):
        return None


def quote(value: str) -> str:
    """A double-quoted YAML scalar that reads back as ``value`` (see the module docstring)."""
    out = ['"']
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif _must_escape(char):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _must_escape(char: str) -> bool:
    """Control characters, YAML 1.1's line breaks (NEL, LS, PS: folded to a space inside quotes) and what YAML may not hold raw."""
    code = ord(char)
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
        or 0xD800 <= code <= 0xDFFF
    )


def account_perm_entries(account: PlainAccessAccount) -> tuple[list[str], list[str]]:
    """The account's ``topicPerms`` and ``groupPerms`` as the file spells them (``name=PERM``, groups without ``%RETRY%``)."""
    topics = [f"{name}={perm_name(perm)}" for name, perm in account.topic_perms.items()]
    groups = [
        f"{resource[len(RETRY_GROUP_TOPIC_PREFIX) :]}={perm_name(perm)}"
        for resource, perm in account.group_perms.items()
    ]
    return topics, groups


def _list(key: str, items: list[str], indent: str) -> list[str]:
    if not items:
        return [f"{indent}{key}: []"]
    return [f"{indent}{key}:"] + [f"{indent}  - {quote(item)}" for item in items]


def render_plain_acl(config: PlainAclConfig, data_version: AclDataVersion | None = None) -> str:
    """The whole file for ``config`` (accounts in their order), with ``data_version`` when given."""
    lines = ["# RocketMQ 4.x plain_acl.yml, written by Gantry's ACL admin requests (codes 50, 51, 53)."]
    lines += _list("globalWhiteRemoteAddresses", [p.text for p in config.global_white_remote_addresses], "")
    if not config.accounts:
        lines.append("accounts: []")
    else:
        lines.append("accounts:")
    for account in config.accounts.values():
        topics, groups = account_perm_entries(account)
        lines += [
            f"  - accessKey: {quote(account.access_key)}",
            f"    secretKey: {quote(account.secret_key)}",
            f"    whiteRemoteAddress: {quote(account.white_remote_address.text)}",
            f"    admin: {'true' if account.admin else 'false'}",
            f"    defaultTopicPerm: {perm_name(account.default_topic_perm)}",
            f"    defaultGroupPerm: {perm_name(account.default_group_perm)}",
        ]
        lines += _list("topicPerms", topics, "    ")
        lines += _list("groupPerms", groups, "    ")
        if account.require_replay_protection:
            lines.append(f"    {ACCOUNT_REPLAY_KEY}: true")
    replay = config.replay_protection
    if not replay.is_default:
        lines += [
            f"{REPLAY_PROTECTION_KEY}:",
            f"  required: {'true' if replay.required else 'false'}",
            f"  windowSeconds: {replay.window_s}",
            f"  nonceCacheMaxEntries: {replay.nonce_cache_max}",
        ]
    if data_version is not None:
        lines += ["dataVersion:", f"  - counter: {data_version.counter}", f"    timestamp: {data_version.timestamp}"]
    return "\n".join(lines) + "\n"


def write_plain_acl_file(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text`` at once (tmp + fsync + rename + directory fsync), mode 0600."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".plain_acl.", suffix=".tmp", dir=directory)  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), FILE_MODE)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
