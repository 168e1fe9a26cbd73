"""The systemd units of docs/deploy/: ``systemd-analyze verify`` accepts them, each runs as the
unprivileged ``gantry`` user with the same hardening, and the Celery units serve the queues the
settings route tasks to."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
UNITS = sorted((ROOT / "docs" / "deploy").glob("*.service"))
INSTALLED = "/opt/gantry"  # where the units expect the checkout (and its .venv)
HARDENING = {
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "PrivateTmp": "yes",
    "ProtectHome": "yes",
    "UMask": "0077",
    "ReadWritePaths": "/var/lib/gantry",
    "Restart": "on-failure",
    "User": "gantry",
}


def _service(unit: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(unit.read_text())
    return dict(parser["Service"])


def test_the_units_of_every_process_are_there():
    assert {u.name for u in UNITS} == {
        "gantry-namesrv@.service",
        "gantry-broker@.service",
        "gantry-web.service",
        "gantry-worker.service",
        "gantry-beat.service",
        "gantry-analytics-worker.service",
    }


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_each_unit_runs_unprivileged_and_hardened(unit):
    service = _service(unit)
    assert {key: service.get(key) for key in HARDENING} == HARDENING
    assert service["EnvironmentFile"].startswith("/etc/gantry/")
    assert service["ExecStart"].startswith(f"{INSTALLED}/.venv/bin/python ")


def test_the_celery_units_serve_the_queues_tasks_are_routed_to():
    worker = _service(ROOT / "docs" / "deploy" / "gantry-worker.service")["ExecStart"].split()
    analytics = _service(ROOT / "docs" / "deploy" / "gantry-analytics-worker.service")["ExecStart"].split()
    assert worker[worker.index("-Q") + 1] == settings.CELERY_TASK_DEFAULT_QUEUE
    assert (
        analytics[analytics.index("-Q") + 1]
        == settings.CELERY_TASK_ROUTES["analytics.tasks.dashboard_refresh_task"]["queue"]
    )
    assert analytics[analytics.index("-c") + 1] == "1"  # one Spark refresh at a time
    assert "gunicorn" in _service(ROOT / "docs" / "deploy" / "gantry-web.service")["ExecStart"].split()


def test_systemd_analyze_verify_accepts_the_units(tmp_path):
    """The units as installed, with the paths of this checkout and virtualenv (verify checks that
    the programs exist) and an instance name for the templates."""
    analyze = shutil.which("systemd-analyze") or (
        "/usr/bin/systemd-analyze" if Path("/usr/bin/systemd-analyze").exists() else None
    )
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    copies = []
    for unit in UNITS:
        text = unit.read_text().replace(f"{INSTALLED}/.venv/bin/python", sys.executable).replace(INSTALLED, str(ROOT))
        copy = tmp_path / unit.name.replace("@.service", "@test.service")
        copy.write_text(text)
        copies.append(copy.name)
    done = subprocess.run(
        [analyze, "verify", "--man=no", *copies], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    ours = [line for line in (done.stdout + done.stderr).splitlines() if "gantry-" in line]
    assert done.returncode == 0 and ours == [], done.stdout + done.stderr
