"""plain_acl.yml as a config: the sample file, and errors that name the field."""

from __future__ import annotations

import pathlib

import pytest

from brokers.engine.acl.permission import PUB_SUB, Perm
from brokers.engine.acl.plain_acl_config import (
    AclConfigError,
    PlainAclConfig,
    ReplayProtection,
    load_plain_acl_file,
    parse_plain_acl_text,
)

SAMPLE = pathlib.Path(__file__).resolve().parents[4] / "docs" / "plain_acl.example.yml"


def test_loads_the_sample_file_like_rocketmqs() -> None:
    config = load_plain_acl_file(str(SAMPLE))
    assert [p.text for p in config.global_white_remote_addresses] == ["10.10.103.*", "192.168.0.*"]
    assert config.is_globally_white("10.10.103.7") and not config.is_globally_white("10.10.104.7")
    assert list(config.accounts) == ["RocketMQ", "rocketmq2"]
    client = config.account("RocketMQ")
    assert client.secret_key == "12345678" and not client.admin
    assert client.white_remote_address.text == "" and not client.white_remote_address.matches("127.0.0.1")
    assert (client.default_topic_perm, client.default_group_perm) == (Perm.DENY, Perm.SUB)
    assert dict(client.topic_perms) == {"topicA": Perm.DENY, "topicB": PUB_SUB, "topicC": Perm.SUB}
    assert dict(client.group_perms) == {"%RETRY%groupA": Perm.DENY, "%RETRY%groupB": PUB_SUB, "%RETRY%groupC": Perm.SUB}
    admin = config.account("rocketmq2")
    assert admin.admin and not admin.has_resource_perms
    assert admin.white_remote_address.matches("192.168.1.20")
    assert (admin.default_topic_perm, admin.default_group_perm) == (Perm.DENY, Perm.DENY)  # absent: DENY


def test_owned_perm_prefers_the_entry_over_the_default() -> None:
    client = load_plain_acl_file(str(SAMPLE)).account("RocketMQ")
    assert client.owned_perm("topicB", is_group=False) == PUB_SUB
    assert client.owned_perm("topicZ", is_group=False) == Perm.DENY
    assert client.owned_perm("%RETRY%groupA", is_group=True) == Perm.DENY
    assert client.owned_perm("%RETRY%groupZ", is_group=True) == Perm.SUB


def test_empty_file_has_no_accounts() -> None:
    assert parse_plain_acl_text("") == PlainAclConfig()
    assert parse_plain_acl_text("accounts:\nglobalWhiteRemoteAddresses:\n").accounts == {}


def test_rocketmq_data_version_block_is_accepted() -> None:
    text = "accounts:\n- accessKey: abcdefg\n  secretKey: 1234567\ndataVersion:\n- counter: 3\n  timestamp: 1620000000000\n"
    assert list(parse_plain_acl_text(text).accounts) == ["abcdefg"]


def test_secret_is_not_in_the_repr() -> None:
    assert "12345678" not in repr(load_plain_acl_file(str(SAMPLE)))


def _account(**fields: str) -> str:
    base = {"accessKey": "account1", "secretKey": "secret12"}
    base.update(fields)
    return "accounts:\n  - " + "\n    ".join(f"{k}: {v}" for k, v in base.items() if v is not None) + "\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            _account() + "  - accessKey: account1\n    secretKey: other123\n",
            "accounts[1].accessKey: 'account1' is already used",
        ),
        (_account(defaultTopicPerm="WRITE"), "accounts[0].defaultTopicPerm: unknown perm 'WRITE'"),
        (_account(topicPerms="[t1=PUB, t2=PUSH]"), "accounts[0].topicPerms[1]: unknown perm 'PUSH'"),
        (_account(groupPerms="[g1]"), "accounts[0].groupPerms[0]: expected 'name=PERM'"),
        (_account(groupPerms="[g1=SUB, g1=PUB]"), "accounts[0].groupPerms[1]: 'g1' is listed twice"),
        (_account(topicPerms="['=SUB']"), "accounts[0].topicPerms[0]: the topic name is empty"),
        (_account(secretKey="123456"), "accounts[0].secretKey: must be longer than 6 characters"),
        (_account(accessKey="abcdef"), "accounts[0].accessKey: must be longer than 6 characters"),
        (_account(secretKey=None), "accounts[0].secretKey: missing"),
        (_account(whiteRemoteAddress="192.168.1.300"), "accounts[0].whiteRemoteAddress: malformed address pattern"),
        (_account(whiteRemoteAddress="10.0.0.5-1"), "accounts[0].whiteRemoteAddress: malformed address pattern"),
        (_account(admin="yes"), "accounts[0].admin: must be true or false"),
        (_account(secretkey="x"), "accounts[0]: unknown key 'secretkey'"),
        ("acounts:\n  - accessKey: x\n", "unknown key 'acounts'"),
        ("globalWhiteRemoteAddresses:\n  - 10.10.*\n", "globalWhiteRemoteAddresses[0]: malformed address pattern"),
        ("globalWhiteRemoteAddresses: 10.0.0.1\n", "globalWhiteRemoteAddresses: must be a list"),
        ("accounts:\n  - just-a-string\n", "accounts[0]: an account must be a mapping"),
        ("- a\n", "the file must be a mapping"),
        ("accounts:\n  - accessKey: *\n", "line 2: a * starts an alias"),
        (
            _account(gantryRequireReplayProtection="sometimes"),
            "accounts[0].gantryRequireReplayProtection: must be true or false",
        ),
        ("gantryReplayProtection: true\n", "gantryReplayProtection: must be a mapping"),
        ("gantryReplayProtection:\n  windowSecond: 60\n", "gantryReplayProtection: unknown key 'windowSecond'"),
        (
            "gantryReplayProtection:\n  windowSeconds: 0\n",
            "gantryReplayProtection.windowSeconds: must be a whole number from 1 to 3600",
        ),
        (
            "gantryReplayProtection:\n  windowSeconds: 1.5\n",
            "gantryReplayProtection.windowSeconds: must be a whole number",
        ),
        (
            "gantryReplayProtection:\n  nonceCacheMaxEntries: 10\n",
            "gantryReplayProtection.nonceCacheMaxEntries: must be a whole number from 1000",
        ),
        ("gantryReplayProtection:\n  required: on\n", "gantryReplayProtection.required: must be true or false"),
    ],
)
def test_errors_name_the_field(text: str, message: str) -> None:
    with pytest.raises(AclConfigError) as caught:
        parse_plain_acl_text(text, source="acl.yml")
    assert str(caught.value).startswith("acl.yml: ")
    assert message in str(caught.value)


def test_gantry_replay_protection_keys_and_their_defaults() -> None:
    default = parse_plain_acl_text(_account())
    assert default.replay_protection == ReplayProtection(required=False, window_s=120, nonce_cache_max=100_000)
    assert not default.account("account1").require_replay_protection
    text = _account(gantryRequireReplayProtection="true") + (
        "gantryReplayProtection:\n  required: true\n  windowSeconds: 30\n  nonceCacheMaxEntries: 5000\n"
    )
    config = parse_plain_acl_text(text)
    assert config.account("account1").require_replay_protection
    assert config.replay_protection == ReplayProtection(required=True, window_s=30, nonce_cache_max=5000)


def test_deep_nesting_is_a_config_error() -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(200))
    with pytest.raises(AclConfigError, match="nested too deeply"):
        parse_plain_acl_text(text)


def test_seven_character_keys_are_accepted() -> None:
    assert list(parse_plain_acl_text(_account(accessKey="abcdefg", secretKey="1234567")).accounts) == ["abcdefg"]


def test_unreadable_file_names_the_path(tmp_path: pathlib.Path) -> None:
    with pytest.raises(AclConfigError, match="cannot read the ACL file"):
        load_plain_acl_file(str(tmp_path / "absent.yml"))
