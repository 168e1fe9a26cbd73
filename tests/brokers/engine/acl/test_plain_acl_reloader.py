"""PlainAclReloader: re-reads the real file when it changes, at most once per interval of an injected clock."""

from __future__ import annotations

import os
import pathlib

import pytest

from brokers.engine.acl.access_validator import AclValidator
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.plain_acl_config import AclConfigError
from brokers.engine.acl.plain_acl_reloader import PlainAclReloader
from brokers.engine.common.clock import ManualClock
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand


def _acl(*keys: str) -> str:
    return "accounts:\n" + "".join(f"  - accessKey: {key}\n    secretKey: secret-{key}\n" for key in keys)


@pytest.fixture
def acl_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "plain_acl.yml"
    path.write_text(_acl("account1"))
    return path


def _rewrite(path: pathlib.Path, text: str, *, keep_mtime: bool = False) -> None:
    before = path.stat()
    path.write_text(text)
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))


def test_loads_at_construction(acl_file: pathlib.Path) -> None:
    reloader = PlainAclReloader(str(acl_file), clock=ManualClock())
    assert list(reloader.config.accounts) == ["account1"]
    assert reloader.last_error is None


def test_a_bad_file_at_start_raises(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "plain_acl.yml"
    path.write_text("accounts:\n  - accessKey: short\n    secretKey: secret-long\n")
    with pytest.raises(AclConfigError, match=r"accounts\[0\].accessKey"):
        PlainAclReloader(str(path), clock=ManualClock())
    with pytest.raises(AclConfigError, match="cannot read"):
        PlainAclReloader(str(tmp_path / "absent.yml"), clock=ManualClock())


def test_reloads_a_changed_file_after_the_interval(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    _rewrite(acl_file, _acl("account1", "account2"))
    clock.advance(0.5)
    assert reloader.maybe_reload() is False  # too soon: the file is not even looked at
    assert list(reloader.config.accounts) == ["account1"]
    clock.advance(0.5)
    assert reloader.maybe_reload() is True
    assert list(reloader.config.accounts) == ["account1", "account2"]
    assert reloader.reload_count == 1


def test_an_unchanged_file_is_not_reloaded(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    config = reloader.config
    for _ in range(5):
        clock.advance(1.0)
        assert reloader.maybe_reload() is False
    os.utime(acl_file, ns=(0, acl_file.stat().st_mtime_ns + 5_000_000_000))  # touched, same content
    clock.advance(1.0)
    assert reloader.maybe_reload() is False
    assert reloader.config is config and reloader.reload_count == 0


def test_a_same_size_same_mtime_rewrite_is_seen_by_its_hash(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    _rewrite(acl_file, _acl("account9"), keep_mtime=True)  # same length, same mtime: a coarse clock's rewrite
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    assert list(reloader.config.accounts) == ["account9"]


def test_a_broken_edit_keeps_the_previous_config(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    _rewrite(acl_file, _acl("account1") + "    defaultTopicPerm: WRITE\n")
    clock.advance(1.0)
    assert reloader.maybe_reload() is False
    assert list(reloader.config.accounts) == ["account1"]
    assert "accounts[0].defaultTopicPerm: unknown perm 'WRITE'" in reloader.last_error
    _rewrite(acl_file, _acl("account2"))
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    assert list(reloader.config.accounts) == ["account2"] and reloader.last_error is None


def test_a_removed_file_keeps_the_previous_config(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    acl_file.unlink()
    clock.advance(1.0)
    assert reloader.maybe_reload() is False
    assert list(reloader.config.accounts) == ["account1"]
    assert "plain_acl.yml" in reloader.last_error
    acl_file.write_text(_acl("account3"))
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    assert list(reloader.config.accounts) == ["account3"]


def test_a_stable_file_is_only_statted(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    clock.advance(3.0)
    reloader.maybe_reload()
    acl_file.chmod(0)  # unreadable: a read would fail and set last_error; a stat does not
    try:
        clock.advance(1.0)
        assert reloader.maybe_reload() is False
        assert reloader.last_error is None
    finally:
        acl_file.chmod(0o600)


def test_an_account_removed_from_the_file_is_refused_after_the_reload(acl_file: pathlib.Path) -> None:
    _rewrite(
        acl_file,
        _acl("account1", "account2").replace(
            "secretKey: secret-account1", "secretKey: secret-account1\n    admin: true"
        ),
    )
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    validator = AclValidator(reloader)
    hook = AclClientHook("account1", "secret-account1")
    validator.validate(
        hook.sign_request(RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, {"topic": "t"})), ("10.0.0.1", 1)
    )
    _rewrite(acl_file, _acl("account2"))
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    stale = hook.sign_request(RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, {"topic": "t"}))
    with pytest.raises(AclRefused, match="unknown accessKey account1"):
        validator.validate(stale, ("10.0.0.1", 1))


def _send(hook: AclClientHook, topic: str) -> RemotingCommand:
    return hook.sign_request(
        RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"a": "producers", "b": topic}, b"body")
    )


def test_a_changed_perm_takes_effect_after_the_reload_though_the_last_answer_was_remembered(
    acl_file: pathlib.Path,
) -> None:
    _rewrite(acl_file, _acl("account1") + "    topicPerms:\n      - orders=PUB\n")
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    validator = AclValidator(reloader)
    hook = AclClientHook("account1", "secret-account1")
    for _ in range(2):  # the second answer comes from the validator's memory of the first
        validator.validate(_send(hook, "orders"), ("10.0.0.1", 1))
    _rewrite(acl_file, _acl("account1") + "    topicPerms:\n      - orders=DENY\n")
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    with pytest.raises(AclRefused, match="no permission to PUB on topic orders"):
        validator.validate(_send(hook, "orders"), ("10.0.0.1", 1))
    _rewrite(acl_file, _acl("account1") + "    topicPerms:\n      - orders=PUB\n")
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    validator.validate(_send(hook, "orders"), ("10.0.0.1", 1))


def test_a_peer_made_globally_white_by_a_reload_passes_unsigned(acl_file: pathlib.Path) -> None:
    clock = ManualClock()
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    validator = AclValidator(reloader)
    unsigned = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"a": "producers", "b": "orders"}, b"body")
    for _ in range(2):
        with pytest.raises(AclRefused, match="not signed"):
            validator.validate(unsigned, ("10.0.0.1", 1))
    _rewrite(acl_file, "globalWhiteRemoteAddresses:\n  - 10.0.0.*\n" + _acl("account1"))
    clock.advance(1.0)
    assert reloader.maybe_reload() is True
    validator.validate(unsigned, ("10.0.0.1", 1))
    with pytest.raises(AclRefused, match="not signed"):
        validator.validate(unsigned, ("10.0.1.1", 1))
