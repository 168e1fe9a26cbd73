"""The ACL file writer and the admin edits, pure: what is written reads back as the same config."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from brokers.engine.acl.plain_acl_config import parse_plain_acl_text
from brokers.engine.acl.plain_acl_editor import (
    AccessConfigChange,
    AclEditError,
    delete_account,
    set_global_white_addresses,
    split_addresses,
    upsert_account,
)
from brokers.engine.acl.plain_acl_writer import (
    AclDataVersion,
    read_data_version,
    render_plain_acl,
    write_plain_acl_file,
)

EXAMPLE = Path(__file__).resolve().parents[4] / "docs" / "plain_acl.example.yml"
ODD_SECRETS = [
    "12345678",
    'has "quotes" and \\',
    "colon: hash # star *",
    "tab\tnewline\nend",
    "ünïcödé-secret",
    "- dash-secret",
    "'single' quote",
    "nel\x85ls\u2028ps\u2029c1\x9fend",
    "0777777",
    "2001-01-01",
    "1_000_000",
    "&anchor *alias !tag",
]


def test_the_example_file_round_trips_with_its_data_version():
    config = parse_plain_acl_text(EXAMPLE.read_text())
    text = render_plain_acl(config, AclDataVersion(3, 1700000000000))
    assert parse_plain_acl_text(text) == config
    assert read_data_version(text) == AclDataVersion(3, 1700000000000)


@pytest.mark.parametrize("secret", ODD_SECRETS)
def test_any_secret_and_pattern_reads_back_as_written(secret):
    config = parse_plain_acl_text("accounts:\n  - accessKey: admin-key\n    secretKey: admin-secret\n    admin: true\n")
    changed, created = upsert_account(
        config,
        AccessConfigChange(
            "odd-account", secret, white_remote_address="*", topic_perms="a=PUB,b=SUB|PUB,", group_perms="g=DENY"
        ),
    )
    assert created
    assert parse_plain_acl_text(render_plain_acl(changed)) == changed
    assert changed.account("odd-account").secret_key == secret


def test_edits_keep_fields_left_out_and_refuse_removing_the_last_admin():
    config = parse_plain_acl_text(EXAMPLE.read_text())
    kept, created = upsert_account(
        config, AccessConfigChange("RocketMQ", None, topic_perms=None, default_topic_perm="")
    )
    assert not created and kept.account("RocketMQ").topic_perms == config.account("RocketMQ").topic_perms
    assert list(kept.accounts) == list(config.accounts)
    cleared, _ = upsert_account(config, AccessConfigChange("RocketMQ", None, topic_perms=""))
    assert dict(cleared.account("RocketMQ").topic_perms) == {}
    with pytest.raises(AclEditError, match="no admin account"):
        delete_account(config, "rocketmq2")
    with pytest.raises(AclEditError, match="no account 'nobody-here'"):
        delete_account(config, "nobody-here")
    with pytest.raises(AclEditError, match=r"^globalWhiteAddrs\[0\]"):
        set_global_white_addresses(config, "10.0.0.999")
    assert split_addresses("10.0.0.{1,2}, 1050::{3,4},*") == ["10.0.0.{1,2}", "1050::{3,4}", "*"]


def test_gantry_replay_keys_are_written_when_set_kept_by_edits_and_left_out_otherwise():
    plain = parse_plain_acl_text(EXAMPLE.read_text())
    assert "gantry" not in render_plain_acl(plain)  # a file that does not use them stays Apache 5.x's shape
    config = parse_plain_acl_text(
        "accounts:\n  - accessKey: admin-key\n    secretKey: admin-secret\n    admin: true\n"
        "    gantryRequireReplayProtection: true\n"
        "gantryReplayProtection:\n  required: true\n  windowSeconds: 30\n"
    )
    assert parse_plain_acl_text(render_plain_acl(config)) == config
    edited, _ = upsert_account(config, AccessConfigChange("admin-key", None, admin=True, topic_perms="a=PUB"))
    edited, _ = upsert_account(edited, AccessConfigChange("other-key", "other-secret"))
    edited = set_global_white_addresses(delete_account(edited, "other-key"), "10.0.0.1")
    assert edited.account("admin-key").require_replay_protection
    assert edited.replay_protection == config.replay_protection
    assert parse_plain_acl_text(render_plain_acl(edited)) == edited


def test_the_file_is_replaced_at_once_with_mode_0600(tmp_path):
    path = tmp_path / "plain_acl.yml"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_plain_acl_file(str(path), "accounts: []\n")
    assert path.read_text() == "accounts: []\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["plain_acl.yml"]
