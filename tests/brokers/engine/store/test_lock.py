"""The lock file keeps a second store (or process) off a directory; abort marks an unclean stop."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from brokers.engine.store import DefaultMessageStore, StoreLockedError
from tests.brokers.engine.store._support import make_config


def test_a_second_store_on_the_directory_is_refused(tmp_path, clock):
    config = make_config(tmp_path / "s")
    first = DefaultMessageStore(config, clock=clock)
    first.open()
    try:
        with pytest.raises(StoreLockedError) as err:
            DefaultMessageStore(config, clock=clock).open()
        assert config.lock_path in str(err.value)
        assert os.path.exists(config.abort_path)
    finally:
        first.close()
    assert not os.path.exists(config.abort_path)
    with DefaultMessageStore(config, clock=clock):
        pass


def test_another_process_holding_the_lock_is_detected(tmp_path, clock):
    config = make_config(tmp_path / "s")
    script = textwrap.dedent(f"""
        import sys, time
        from brokers.engine.store import DefaultMessageStore, StoreConfig
        store = DefaultMessageStore(StoreConfig(store_dir={config.store_dir!r}, commitlog_file_size=4096))
        store.open()
        print("open", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert proc.stdout.readline().strip() == "open"
        with pytest.raises(StoreLockedError, match="in use"):
            DefaultMessageStore(config, clock=clock).open()
    finally:
        proc.kill()
        proc.wait()
    with DefaultMessageStore(config, clock=clock) as store:  # the OS dropped the dead process's lock
        assert store.recovery_report.abnormal
