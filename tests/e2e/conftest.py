"""Browser tests: Debian's chromium driven by Playwright (no browser download)."""

from __future__ import annotations

import os
import shutil

import pytest

# Playwright's sync API keeps an event loop on the main thread; Django's ORM calls in these tests
# are still synchronous, so allow them (the documented setting for Playwright + Django tests).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
# Flags for a closed network and a root user: no background calls home, no sandbox.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"chromium not found at {CHROMIUM}: `make test` installs Debian's chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    p = context.new_page()
    yield p
    context.close()


@pytest.fixture(scope="session")
def artifacts_dir():
    """Where browser tests save screenshots: $GANTRY_ARTIFACTS, else var/test-artifacts/."""
    from pathlib import Path

    root = Path(os.environ.get("GANTRY_ARTIFACTS") or Path(__file__).resolve().parents[2] / "var" / "test-artifacts")
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture
def screenshot(page, artifacts_dir, request):
    """Return a function that saves a full-page screenshot named after the test and a step."""

    def shoot(step: str):
        path = artifacts_dir / f"{request.node.name}-{step}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return shoot


def log_in(page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")
