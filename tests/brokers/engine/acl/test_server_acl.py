"""Secure by default: which servers run with the ACL, the refusal log, and the broker's own credential.

The processes are real (``python -m brokers.engine``); a refused start listens on 0.0.0.0 port 0,
so nothing is bound if the check comes first.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brokers.engine.acl import AclConfigError, PlainAclReloader, parse_plain_acl_text
from brokers.engine.acl.acl_guard import AclGuard, RefusalLog
from brokers.engine.acl.broker_credential import BrokerCredential
from brokers.engine.acl.server_acl import AclRequiredError, is_loopback_host, server_acl_guard
from brokers.engine.acl.signature import ACCESS_KEY, SIGNATURE, verify
from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.controller import BrokerController
from brokers.engine.common.clock import ManualClock
from brokers.engine.namesrv.server import NamesrvConfig, NamesrvController
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.store.config import StoreConfig
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, acl_text, write_acl

REPO = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_hosts(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "", None, "::", "10.0.0.5", "192.168.1.1", "example.com", "fe80::1%eth0"])
def test_non_loopback_hosts(host):
    assert not is_loopback_host(host)


def test_which_servers_run_with_the_acl(tmp_path, caplog):
    acl_file = str(write_acl(tmp_path / "plain_acl.yml", acl_text()))
    assert server_acl_guard(host="127.0.0.1", acl_file=None) is None  # loopback: off, as before
    assert isinstance(server_acl_guard(host="127.0.0.1", acl_file=acl_file), AclGuard)
    assert isinstance(server_acl_guard(host="0.0.0.0", acl_file=acl_file), AclGuard)
    with pytest.raises(AclRequiredError, match="--acl-file"):
        server_acl_guard(host="0.0.0.0", acl_file=None, name="namesrv")
    with pytest.raises(AclRequiredError, match="not both"):
        server_acl_guard(host="0.0.0.0", acl_file=acl_file, no_acl=True)
    with caplog.at_level(logging.WARNING, logger="brokers.engine.acl"):
        assert server_acl_guard(host="0.0.0.0", acl_file=None, no_acl=True, name="namesrv") is None
    assert any(r.levelno == logging.WARNING and "ACL OFF" in r.getMessage() for r in caplog.records)
    (tmp_path / "bad.yml").write_text("acounts:\n  - accessKey: x\n")
    with pytest.raises(AclConfigError):
        server_acl_guard(host="127.0.0.1", acl_file=str(tmp_path / "bad.yml"))


def test_controllers_refuse_a_non_loopback_address_without_an_acl_before_binding(tmp_path):
    with pytest.raises(AclRequiredError):
        NamesrvController(NamesrvConfig(host="0.0.0.0", port=0))
    store = tmp_path / "store"
    with pytest.raises(AclRequiredError):
        BrokerController(
            BrokerConfig(broker_name="broker-x", listen_host="0.0.0.0", listen_port=0, store=StoreConfig(str(store)))
        )
    assert not store.exists()


def test_refusals_are_logged_at_most_burst_lines_per_window(caplog):
    clock = ManualClock()
    refusals = RefusalLog("broker-a", clock=clock, burst=3, window_s=10.0)
    with caplog.at_level(logging.INFO, logger="brokers.engine.acl"):
        for _ in range(5):
            refusals.refused("10.0.0.9:5555", 17, "request code 17 is not signed")
        clock.advance(10.0)
        refusals.refused("10.0.0.9:5555", 17, "request code 17 is not signed")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[:3] == ["broker-a: refused request code 17 from 10.0.0.9:5555: request code 17 is not signed"] * 3
    assert lines[3] == "broker-a: 2 more refused requests were not logged in the last 10s"
    assert len(lines) == 5 and refusals.total == 6


def test_broker_credential_fixed_keys_else_the_files_first_admin(tmp_path):
    request = RemotingCommand.request(RequestCode.REGISTER_BROKER, {"brokerName": "broker-a"}, b"body")
    fixed = BrokerCredential(access_key=DEMO[0], secret_key=DEMO[1])
    fixed.sign_request(request)
    assert request.ext_fields[ACCESS_KEY] == DEMO[0]
    assert verify(DEMO[1], request.ext_fields, request.body, request.ext_fields[SIGNATURE])
    with pytest.raises(ValueError):
        BrokerCredential(access_key=DEMO[0])

    clock = ManualClock()
    acl_file = write_acl(tmp_path / "plain_acl.yml", acl_text())
    reloader = PlainAclReloader(str(acl_file), clock=clock)
    from_file = BrokerCredential(acl_source=reloader)
    assert from_file.access_key == ADMIN[0]
    write_acl(acl_file, acl_text().replace(ADMIN[1], "rotated-admin-secret"))
    clock.advance(5)
    assert reloader.maybe_reload()
    signed = from_file.sign_request(RemotingCommand.request(RequestCode.REGISTER_BROKER, {}, b"x"))
    assert verify("rotated-admin-secret", signed.ext_fields, signed.body, signed.ext_fields[SIGNATURE])

    no_admin = BrokerCredential(
        acl_source=AclGuard(parse_plain_acl_text(f"accounts:\n  - accessKey: {DEMO[0]}\n    secretKey: {DEMO[1]}\n"))
    )
    assert no_admin.access_key is None
    assert ACCESS_KEY not in no_admin.sign_request(RemotingCommand.request(RequestCode.REGISTER_BROKER)).ext_fields


# -- the command lines ----------------------------------------------------------------------------


def _run(args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "brokers.engine", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ready_then_stop(proc: subprocess.Popen, pattern: str) -> tuple[str, str]:
    """Wait for the ready line, stop the process with SIGTERM; return (ready line, stderr)."""
    deadline = time.monotonic() + 20
    ready = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if re.search(pattern, line):
            ready = line
            break
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    assert ready, f"no ready line: {err}"
    return ready, err


@pytest.mark.parametrize("command", [["namesrv"], ["broker", "--name", "broker-x"]])
def test_a_non_loopback_listen_without_an_acl_file_refuses_to_start(command, tmp_path):
    store = tmp_path / "store"
    extra = ["--store-dir", str(store)] if command[0] == "broker" else []
    proc = _run([*command, "--host", "0.0.0.0", "--port", "0", *extra])
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "refuses to start" in err and "--acl-file" in err and "--no-acl" in err
    assert "ready" not in out
    assert not store.exists()


@pytest.mark.parametrize(
    "command,pattern",
    [(["namesrv"], r"namesrv ready on"), (["broker", "--name", "broker-x"], r"broker broker-x ready at")],
)
def test_no_acl_starts_on_a_non_loopback_address_with_a_warning(command, pattern, tmp_path):
    extra = ["--store-dir", str(tmp_path / "store")] if command[0] == "broker" else []
    _, err = _ready_then_stop(_run([*command, "--host", "0.0.0.0", "--port", "0", "--no-acl", *extra]), pattern)
    assert re.search(r"WARNING .*ACL OFF \(--no-acl\)", err)


def test_acl_file_flag_turns_the_acl_on(tmp_path):
    acl_file = write_acl(tmp_path / "plain_acl.yml", acl_text())
    _, err = _ready_then_stop(
        _run(["namesrv", "--host", "0.0.0.0", "--port", "0", "--acl-file", str(acl_file)]), r"namesrv ready on"
    )
    assert "ACL on, 4 accounts" in err
