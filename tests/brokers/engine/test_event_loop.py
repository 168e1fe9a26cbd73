"""The tier's event loop: uvloop when installed, asyncio's own on request, a clear refusal otherwise."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from brokers.engine import event_loop
from tests.brokers.engine._group_procs import ROOT, NamesrvProc
from tests.fixtures.ports import free_port


async def _running_loop_name() -> str:
    return event_loop.loop_name(asyncio.get_running_loop())


def test_uvloop_is_the_default_and_asyncio_is_one_variable_away(monkeypatch):
    monkeypatch.delenv(event_loop.ENV, raising=False)
    assert event_loop.kind() == "uvloop"  # requirements.txt installs it
    assert event_loop.run(_running_loop_name()) == "uvloop"
    loop = event_loop.new_event_loop()
    try:
        assert event_loop.loop_name(loop) == "uvloop" and not loop.is_running()
    finally:
        loop.close()

    monkeypatch.setenv(event_loop.ENV, " AsyncIO ")
    assert event_loop.kind() == "asyncio"
    assert event_loop.run(_running_loop_name()) == "asyncio"


def test_without_uvloop_the_default_falls_back_and_an_explicit_request_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop -> ImportError, as in the client wheel's venv
    monkeypatch.delenv(event_loop.ENV, raising=False)
    assert event_loop.kind() == "asyncio"
    assert event_loop.run(_running_loop_name()) == "asyncio"
    monkeypatch.setenv(event_loop.ENV, "uvloop")
    with pytest.raises(ImportError, match="GANTRY_EVENT_LOOP=uvloop but uvloop is not installed"):
        event_loop.kind()


def test_an_unknown_loop_is_refused_before_anything_listens(tmp_path):
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), event_loop.ENV: "tokio"}
    for argv in (
        ["namesrv", "--port", str(port)],
        [
            "broker",
            "--name",
            "broker-x",
            "--port",
            str(port),
            "--namesrv",
            "127.0.0.1:1",
            "--store-dir",
            str(tmp_path / "store"),
        ],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "brokers.engine", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (argv, done)
        assert "GANTRY_EVENT_LOOP='tokio': expected 'uvloop' or 'asyncio'" in done.stderr
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("wanted", ["", "asyncio"])
def test_a_name_server_says_which_loop_it_runs(tmp_path, monkeypatch, wanted):
    monkeypatch.setenv(event_loop.ENV, wanted)
    ns = NamesrvProc(tmp_path, event_loop=wanted).start()
    try:
        deadline = time.monotonic() + 10
        while "event loop:" not in ns.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"event loop: {wanted or 'uvloop'})" in ns.log_text()
    finally:
        ns.stop()
