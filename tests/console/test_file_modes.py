"""File modes after make run's setup: var/ 0700 and its files 0600, the brokers' stores 0700/0600.

Not a whole ``make run``: its pieces, each as make run runs it, in a subprocess started under a
shell's usual umask (022) on a fresh var/ — ``manage.py migrate`` (the database), ``ensure_admin``
(the admin password; it also secures what migrate made), the settings (the secret key, the
private Redis password), and ``run_cluster`` with a store under var/store that then takes a
topic and a message (files created while it runs).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.topic_config import TopicConfig
from console.file_modes import secure_var_dir
from tests.brokers.engine.client._cluster import wait_for_route
from tests.fixtures.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]
SHELL_UMASK = 0o022


def _env(var: Path) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "SECRET_KEY", "GANTRY_STORE_DIR")
    }
    return {**env, "GANTRY_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "console.settings", "PYTHONUNBUFFERED": "1"}


def _manage(var: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(var),
        umask=SHELL_UMASK,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            out[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return out


def _wrong(modes: dict[str, int], root: Path) -> dict[str, str]:
    return {p: oct(m) for p, m in modes.items() if m & 0o077 or ((root / p).is_dir() and m != 0o700)}


def test_the_setup_commands_leave_var_for_its_owner_only(tmp_path) -> None:
    var = tmp_path / "var"
    _manage(var, "migrate", "--noinput", "-v", "0")
    _manage(var, "ensure_admin")
    modes = _modes(var)
    for name in ("console.sqlite3", "secret_key", "admin-password", "redis-password"):
        assert modes.get(name) == 0o600, (name, modes)
    assert modes["."] == 0o700
    assert not _wrong(modes, var), _wrong(modes, var)


def test_run_cluster_stores_are_for_their_owner_only_files_made_later_too(tmp_path) -> None:
    var = tmp_path / "var"
    namesrv_port, broker_port = free_ports(2)
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "run_cluster",
            "--store-dir",
            str(var / "store"),
            "--namesrv-port",
            str(namesrv_port),
            "--broker",
            f"broker-m:{broker_port}",
        ],
        cwd=ROOT,
        env=_env(var),
        umask=SHELL_UMASK,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        for line in proc.stdout:
            if re.search(r"\bready\b", line) or time.monotonic() > deadline:
                break
        assert proc.poll() is None, proc.stdout.read()
        addr = f"127.0.0.1:{namesrv_port}"
        with BlockingMQAdminClient(addr) as admin:
            admin.create_or_update_topic_in_cluster("DefaultCluster", TopicConfig("ModesT", 1, 1))
            wait_for_route(admin, "ModesT", 1)
        with SimpleProducer(addr, "modes_producer", heartbeat_interval_s=None) as producer:
            producer.send(Message("ModesT", b"private"))
        store = var / "store"
        modes = _modes(store)
        assert any("commitlog" in p for p in modes) and any("ModesT" in p for p in modes), modes
        assert not _wrong(modes, store), _wrong(modes, store)
    finally:
        proc.terminate()
        proc.wait(30)


def test_secure_var_dir_takes_the_group_and_other_bits_off_what_was_there(tmp_path) -> None:
    var = tmp_path / "var"
    (var / "lake" / "day=1").mkdir(parents=True, mode=0o755)
    for name, mode in (
        ("console.sqlite3", 0o644),
        ("console.sqlite3-wal", 0o644),
        ("celerybeat-schedule", 0o664),
        ("lake/day=1/part.parquet", 0o644),
        ("run.sh", 0o755),
    ):
        (var / name).write_text("x")
        os.chmod(var / name, mode)
    os.chmod(var, 0o755)
    secure_var_dir(var)
    modes = _modes(var)
    assert modes == {
        ".": 0o700,
        "lake": 0o700,
        "lake/day=1": 0o700,
        "console.sqlite3": 0o600,
        "console.sqlite3-wal": 0o600,
        "celerybeat-schedule": 0o600,
        "lake/day=1/part.parquet": 0o600,
        "run.sh": 0o700,
    }
