"""Production settings pass ``manage.py check --deploy`` (DEBUG off, a long SECRET_KEY, hosts, HTTPS)."""

from __future__ import annotations

import os
import pathlib
import secrets
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _check(tmp_path, **env) -> subprocess.CompletedProcess:
    dropped = (
        "DEBUG",
        "GANTRY_HTTPS",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
    )  # the browser tests set the last
    environ = {k: v for k, v in os.environ.items() if k not in dropped}
    environ.update({"GANTRY_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "console.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_production_settings(tmp_path) -> None:
    # the environment docs/deployment.md's "The web console in production" documents
    result = _check(
        tmp_path,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="gantry.example.com",
        GANTRY_HTTPS="1",
        GANTRY_BEHIND_PROXY="1",
        CSRF_TRUSTED_ORIGINS="https://gantry.example.com",
        GANTRY_LOG_FORMAT="json",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_says_what_is_missing_without_https(tmp_path) -> None:
    result = _check(tmp_path, DEBUG="0", SECRET_KEY=secrets.token_urlsafe(64), ALLOWED_HOSTS="gantry.example.com")
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stderr and "SESSION_COOKIE_SECURE" in result.stderr


def test_no_default_secret_key(tmp_path) -> None:
    """Without SECRET_KEY a random one is generated once into the var directory (mode 0600)."""
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update({"GANTRY_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "console.settings"})
    run = lambda: subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); " + code],
        cwd=ROOT,
        env=env,  # noqa: E731
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    first = run()
    assert len(first) >= 50 and run() == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
