"""PlainAclConfig: RocketMQ 4.x's ``plain_acl.yml`` as frozen dataclasses, read and validated.

The file (RocketMQ's ``distribution/conf/plain_acl.yml`` shape)::

    globalWhiteRemoteAddresses:       peers that pass every check, unsigned (patterns: remote_address.py)
      - 10.10.103.*
    accounts:
      - accessKey: RocketMQ           > 6 characters, unique in the file
        secretKey: 12345678           > 6 characters
        whiteRemoteAddress:           peers that pass unsigned with this account's key; empty: none
        admin: false                  true: may use the admin codes; with no perms, every resource too
        defaultTopicPerm: DENY        for topics not listed below (absent: DENY, as in RocketMQ)
        defaultGroupPerm: SUB         for groups not listed below (absent: DENY)
        topicPerms: [topicA=DENY, topicB=PUB|SUB]
        groupPerms: [groupA=SUB]      stored under %RETRY%groupA (permission.group_resource)
    dataVersion: [...]                written by RocketMQ's admin updates; read and ignored
    gantryReplayProtection:           Gantry only (replay_cache.py); every key optional
      required: false                 true: every signed request must carry GantryTimestamp and GantryNonce
      windowSeconds: 120              a signed timestamp further than this from the server's clock is refused
      nonceCacheMaxEntries: 100000    nonces remembered per server; see ReplayProtection

An account may also say ``gantryRequireReplayProtection: true``: its signed requests must carry the
two fields (so a RocketMQ 4.x client cannot use it). Apache's 4.9 brokers ignore both Gantry keys; its
5.x brokers read the file into a fixed class and refuse unknown keys, so leave them out of a file an
Apache 5.x broker reads too (the defaults apply).

RocketMQ's minimum for both keys is "longer than 6" (``AclConstants.ACCESS_KEY_MIN_LENGTH`` = 6 with a
``<=`` test in ``PlainPermissionManager``), so 7 characters is the shortest accepted.

Where RocketMQ is lenient Gantry refuses the file, naming the field (``accounts[1].topicPerms[0]: ...``):
an unknown perm (RocketMQ reads it as DENY), a duplicate accessKey (RocketMQ keeps the first), a topic
or group listed twice in one account (RocketMQ keeps the last), an unknown key (a typo such as
``acounts`` would otherwise drop every account), a malformed address pattern.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from brokers.engine.acl.permission import Perm, UnknownPermError, group_resource, parse_perm
from brokers.engine.acl.remote_address import AddressPatternError, RemoteAddressPattern
from brokers.engine.acl.plain_acl_yaml import MAX_ACL_FILE_BYTES, AclYamlError, load_plain_acl_yaml

ACCESS_KEY_MIN_LENGTH = 7  # RocketMQ: "length should longer than 6"
SECRET_KEY_MIN_LENGTH = 7

REPLAY_PROTECTION_KEY = "gantryReplayProtection"  # top level, Gantry only
ACCOUNT_REPLAY_KEY = "gantryRequireReplayProtection"  # per account, Gantry only
_TOP_LEVEL_KEYS = frozenset({"globalWhiteRemoteAddresses", "accounts", "dataVersion", REPLAY_PROTECTION_KEY})
_ACCOUNT_KEYS = frozenset(
    {
        "accessKey",
        "secretKey",
        "whiteRemoteAddress",
        "admin",
        "defaultTopicPerm",
        "defaultGroupPerm",
        "topicPerms",
        "groupPerms",
        ACCOUNT_REPLAY_KEY,
    }
)
_REPLAY_KEYS = frozenset({"required", "windowSeconds", "nonceCacheMaxEntries"})

# The window bounds how far a signer's clock may be from the server's (NTP keeps them within a second)
# and how long a captured request stays usable; 120 s leaves room for a badly kept clock.
REPLAY_WINDOW_S = 120
REPLAY_WINDOW_MAX_S = 3600  # a longer window only makes the nonce cache larger
# ~220 bytes an entry (measured: the nonce, its timestamp, a set slot, a heap tuple): ~22 MB at most. It holds
# 120 s of 830 Gantry-signed requests a second; past that the oldest go first and the window shrinks
# (replay_cache.py), so a fuller server refuses late-arriving requests, never a replay.
NONCE_CACHE_MAX_ENTRIES = 100_000
NONCE_CACHE_MIN_ENTRIES = 1_000
NONCE_CACHE_MAX_ENTRIES_LIMIT = 10_000_000


class AclConfigError(ValueError):
    """The ACL file cannot be used; the message names the file (when known) and the field."""


@dataclass(frozen=True, slots=True)
class PlainAccessAccount:
    """One ``accounts`` entry. ``resource_perms`` maps topics and ``%RETRY%<group>`` to their perm."""

    access_key: str
    secret_key: str = field(repr=False)
    white_remote_address: RemoteAddressPattern = RemoteAddressPattern("")
    admin: bool = False
    default_topic_perm: Perm = Perm.DENY
    default_group_perm: Perm = Perm.DENY
    topic_perms: Mapping[str, Perm] = field(default_factory=lambda: MappingProxyType({}))
    group_perms: Mapping[str, Perm] = field(default_factory=lambda: MappingProxyType({}))
    require_replay_protection: bool = False  # gantryRequireReplayProtection: 4.x-style signatures refused

    @property
    def has_resource_perms(self) -> bool:
        """Whether any topic or group is listed (an admin without entries passes every resource)."""
        return bool(self.topic_perms or self.group_perms)

    def owned_perm(self, resource: str, *, is_group: bool) -> Perm:
        """The perm this account holds on a topic or a ``%RETRY%<group>`` resource: its entry, else the default."""
        if is_group:
            return self.group_perms.get(resource, self.default_group_perm)
        return self.topic_perms.get(resource, self.default_topic_perm)


@dataclass(frozen=True, slots=True)
class ReplayProtection:
    """``gantryReplayProtection``: how the servers check Gantry's signed timestamp and nonce (replay_cache.py).

    ``required``: refuse signed requests without ``GantryTimestamp`` and ``GantryNonce`` from every
    account (default off: RocketMQ 4.x clients cannot send them). ``window_s``: the largest distance
    between a request's signed timestamp and the server's clock. ``nonce_cache_max``: nonces a server
    remembers at most.
    """

    required: bool = False
    window_s: int = REPLAY_WINDOW_S
    nonce_cache_max: int = NONCE_CACHE_MAX_ENTRIES

    @property
    def is_default(self) -> bool:
        return self == ReplayProtection()


@dataclass(frozen=True, slots=True)
class PlainAclConfig:
    """The whole file: global white addresses, the accounts by accessKey (in file order), Gantry's replay settings."""

    global_white_remote_addresses: tuple[RemoteAddressPattern, ...] = ()
    accounts: Mapping[str, PlainAccessAccount] = field(default_factory=lambda: MappingProxyType({}))
    replay_protection: ReplayProtection = ReplayProtection()

    def account(self, access_key: str | None) -> PlainAccessAccount | None:
        return None if access_key is None else self.accounts.get(access_key)

    def is_globally_white(self, host: str | None) -> bool:
        return any(pattern.matches(host) for pattern in self.global_white_remote_addresses)


def parse_plain_acl_text(text: str, source: str = "plain_acl.yml") -> PlainAclConfig:
    """Read the file's text; raise AclConfigError naming ``source``, the line or the field."""
    try:
        data = load_plain_acl_yaml(text)
    except AclYamlError as exc:
        raise AclConfigError(f"{source}: {exc}") from None
    except RecursionError:
        raise AclConfigError(f"{source}: nested too deeply") from None
    try:
        return plain_acl_config_from_data(data)
    except AclConfigError as exc:
        raise AclConfigError(f"{source}: {exc}") from None


def load_plain_acl_file(path: str) -> PlainAclConfig:
    """Read and validate the file at ``path`` (UTF-8)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(
                MAX_ACL_FILE_BYTES + 1
            )  # characters, each at least a byte: more is refused, never read whole
    except (OSError, UnicodeDecodeError) as exc:
        raise AclConfigError(f"{path}: cannot read the ACL file: {exc}") from None
    return parse_plain_acl_text(text, source=path)


def plain_acl_config_from_data(data: Any) -> PlainAclConfig:
    """Build the config from parsed YAML (dicts, lists, strings, None); an empty file has no accounts."""
    if data is None:
        return PlainAclConfig()
    if not isinstance(data, dict):
        raise AclConfigError("the file must be a mapping with globalWhiteRemoteAddresses and accounts")
    unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
    if unknown:
        raise AclConfigError(
            f"unknown key {unknown[0]!r} (expected globalWhiteRemoteAddresses, accounts, {REPLAY_PROTECTION_KEY})"
        )
    white = tuple(
        _pattern(item, f"globalWhiteRemoteAddresses[{i}]")
        for i, item in enumerate(_list(data.get("globalWhiteRemoteAddresses"), "globalWhiteRemoteAddresses"))
    )
    accounts: dict[str, PlainAccessAccount] = {}
    for i, item in enumerate(_list(data.get("accounts"), "accounts")):
        account = _account(item, f"accounts[{i}]")
        if account.access_key in accounts:
            raise AclConfigError(f"accounts[{i}].accessKey: {account.access_key!r} is already used by another account")
        accounts[account.access_key] = account
    return PlainAclConfig(white, MappingProxyType(accounts), _replay_protection(data.get(REPLAY_PROTECTION_KEY)))


def _replay_protection(data: Any) -> ReplayProtection:
    where = REPLAY_PROTECTION_KEY
    if data is None:
        return ReplayProtection()
    if not isinstance(data, dict):
        raise AclConfigError(f"{where}: must be a mapping (required, windowSeconds, nonceCacheMaxEntries)")
    unknown = sorted(set(data) - _REPLAY_KEYS)
    if unknown:
        raise AclConfigError(
            f"{where}: unknown key {unknown[0]!r} (expected required, windowSeconds, nonceCacheMaxEntries)"
        )
    return ReplayProtection(
        required=_bool(data.get("required"), f"{where}.required"),
        window_s=_int(data.get("windowSeconds"), f"{where}.windowSeconds", REPLAY_WINDOW_S, 1, REPLAY_WINDOW_MAX_S),
        nonce_cache_max=_int(
            data.get("nonceCacheMaxEntries"),
            f"{where}.nonceCacheMaxEntries",
            NONCE_CACHE_MAX_ENTRIES,
            NONCE_CACHE_MIN_ENTRIES,
            NONCE_CACHE_MAX_ENTRIES_LIMIT,
        ),
    )


def _int(value: Any, where: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    text = value.strip() if isinstance(value, str) else ""
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise AclConfigError(f"{where}: must be a whole number from {low} to {high}, got {value!r}")
    return int(text)


def _account(data: Any, where: str) -> PlainAccessAccount:
    if not isinstance(data, dict):
        raise AclConfigError(f"{where}: an account must be a mapping (accessKey, secretKey, ...)")
    unknown = sorted(set(data) - _ACCOUNT_KEYS)
    if unknown:
        raise AclConfigError(f"{where}: unknown key {unknown[0]!r}")
    access_key = _key(data.get("accessKey"), f"{where}.accessKey", ACCESS_KEY_MIN_LENGTH)
    secret_key = _key(data.get("secretKey"), f"{where}.secretKey", SECRET_KEY_MIN_LENGTH)
    topic_perms = _resource_perms(data.get("topicPerms"), f"{where}.topicPerms", is_group=False)
    group_perms = _resource_perms(data.get("groupPerms"), f"{where}.groupPerms", is_group=True)
    return PlainAccessAccount(
        access_key=access_key,
        secret_key=secret_key,
        white_remote_address=_pattern(data.get("whiteRemoteAddress"), f"{where}.whiteRemoteAddress"),
        admin=_bool(data.get("admin"), f"{where}.admin"),
        default_topic_perm=_perm(data.get("defaultTopicPerm"), f"{where}.defaultTopicPerm"),
        default_group_perm=_perm(data.get("defaultGroupPerm"), f"{where}.defaultGroupPerm"),
        topic_perms=MappingProxyType(topic_perms),
        group_perms=MappingProxyType(group_perms),
        require_replay_protection=_bool(data.get(ACCOUNT_REPLAY_KEY), f"{where}.{ACCOUNT_REPLAY_KEY}"),
    )


def _key(value: Any, where: str, minimum: int) -> str:
    if not isinstance(value, str) or not value:
        raise AclConfigError(f"{where}: missing")
    if len(value) < minimum:
        raise AclConfigError(
            f"{where}: must be longer than {minimum - 1} characters (RocketMQ's minimum), got {len(value)}"
        )
    if value != value.strip():
        raise AclConfigError(f"{where}: must not start or end with spaces")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise AclConfigError(f"{where}: must be a list")
    return value


def _pattern(value: Any, where: str) -> RemoteAddressPattern:
    if value is not None and not isinstance(value, str):
        raise AclConfigError(f"{where}: must be an address pattern, not a {type(value).__name__}")
    try:
        return RemoteAddressPattern.parse(value)
    except AddressPatternError as exc:
        raise AclConfigError(f"{where}: {exc}") from None


def _bool(value: Any, where: str) -> bool:
    if value is None:
        return False
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise AclConfigError(f"{where}: must be true or false, got {value!r}")


def _perm(value: Any, where: str) -> Perm:
    if value is None:
        return Perm.DENY  # RocketMQ: parsePermFromString(null) is DENY
    if not isinstance(value, str):
        raise AclConfigError(f"{where}: must be PUB, SUB, PUB|SUB or DENY")
    try:
        return parse_perm(value)
    except UnknownPermError as exc:
        raise AclConfigError(f"{where}: {exc}") from None


def _resource_perms(value: Any, where: str, *, is_group: bool) -> dict[str, Perm]:
    """``name=PERM`` entries; groups keyed by ``%RETRY%<group>``."""
    perms: dict[str, Perm] = {}
    for i, item in enumerate(_list(value, where)):
        entry = f"{where}[{i}]"
        if not isinstance(item, str) or item.count("=") != 1:
            raise AclConfigError(f"{entry}: expected 'name=PERM' (for example topicA=SUB), got {item!r}")
        name, perm_text = (part.strip() for part in item.split("="))
        if not name:
            raise AclConfigError(f"{entry}: the {'group' if is_group else 'topic'} name is empty")
        resource = group_resource(name) if is_group else name
        if resource in perms:
            raise AclConfigError(f"{entry}: {name!r} is listed twice")
        perms[resource] = _perm(perm_text, entry)
    return perms
