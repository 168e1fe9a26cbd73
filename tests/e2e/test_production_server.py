"""`make run`'s web server as production runs it: gunicorn (console/gunicorn_conf.py) after collectstatic,
WhiteNoise serving the hashed static files; a browser loads a page with its CSS and JS."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from console.management.commands.run_embedded import web_server_argv
from tests.fixtures.ports import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HASHED = re.compile(r"/static/.+\.[0-9a-f]{12}\.(css|js)$")


@pytest.fixture
def production_server(tmp_path):
    """gunicorn on a free loopback port with DEBUG off, its own var directory (database, static files)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "GANTRY_HTTPS")}
    env.update(
        {
            "GANTRY_VAR_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'console.sqlite3'}",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "GANTRY_WEB_WORKERS": "1",
            "GANTRY_WEB_THREADS": "2",
        }
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=180,
        capture_output=True,
    )
    log_path = tmp_path / "web.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            web_server_argv(f"127.0.0.1:{port}"),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as answer:
                assert json.load(answer) == {"status": "ok", "failed": []}
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"gunicorn did not answer:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
    yield url, tmp_path, proc
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)


def test_gunicorn_serves_a_page_with_hashed_css_and_js_from_whitenoise(production_server, page) -> None:
    url, var_dir, proc = production_server
    static = {}
    page.on("response", lambda r: static.__setitem__(r.url, r) if "/static/" in r.url else None)
    page.goto(f"{url}/login/")
    page.wait_for_load_state("load")
    assert page.locator("input[name=username]").is_visible()

    kinds = {HASHED.search(u).group(1) for u in static if HASHED.search(u)}
    assert kinds == {"css", "js"}, list(static)  # every stylesheet and script under its hashed name
    for u, response in static.items():
        assert response.status == 200, u
        assert "immutable" in response.headers["cache-control"], u  # WhiteNoise's answer for a hashed file
    assert "system-ui" in page.evaluate("() => getComputedStyle(document.body).fontFamily")  # gantry.css applied
    assert page.evaluate("() => typeof window.htmx") == "object"  # the scripts ran

    # the API docs' vendored Swagger UI (drf-spectacular-sidecar) is collected and served the same way
    manifest = json.loads((var_dir / "static" / "staticfiles.json").read_text())["paths"]
    bundle = manifest["drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"]
    with urllib.request.urlopen(f"{url}/static/{bundle}", timeout=10) as answer:
        assert answer.status == 200 and "immutable" in answer.headers["Cache-Control"]

    proc.terminate()  # SIGTERM: a graceful stop
    assert proc.wait(30) == 0
